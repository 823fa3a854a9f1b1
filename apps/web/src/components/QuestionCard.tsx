import type { PlanbridgeClient } from "@planbridge/client"
import type { PromptView, UserInputAnswerEntry } from "@planbridge/contracts"
import { useState } from "react"
import { markAnsweredHere, markSeenPending, resolvedElsewhere } from "../state/answeredHere.ts"
import { toastError } from "../state/toasts.ts"
import { QuestionField, type Draft } from "./QuestionField.tsx"
import { ResolvedPrompt } from "./ResolvedPrompt.tsx"

const emptyDraft: Draft = { selected: [], text: "" }

/** A question card: answer, skip or cancel; once resolved, what was answered and by whom. */
export const QuestionCard = ({ client, view }: { readonly client: PlanbridgeClient; readonly view: PromptView }) => {
  const [drafts, setDrafts] = useState<ReadonlyMap<string, Draft>>(new Map())
  const [sending, setSending] = useState(false)
  // This tab's own answer: until the server said which answer won, the card claims neither.
  const [outcome, setOutcome] = useState<"none" | "sending" | "won" | "lost">("none")
  const prompt = view.prompt

  if (view.status === "resolved" || outcome === "lost") {
    const elsewhere = outcome === "lost" || (outcome === "none" && resolvedElsewhere(view.promptId))
    return <ResolvedPrompt view={view} elsewhere={elsewhere} />
  }

  markSeenPending(view.promptId)
  const send = async (action: () => Promise<unknown>) => {
    setSending(true)
    setOutcome("sending")
    try {
      await action()
      markAnsweredHere(view.promptId)
      setOutcome("won")
    } catch (e) {
      const lost = (e as { code?: string }).code === "already_resolved"
      setOutcome(lost ? "lost" : "none")
      if (!lost) toastError("answer", e)
    } finally {
      // The clear text of every answer leaves this tab's memory once sent (secrets included).
      setDrafts(new Map())
      setSending(false)
    }
  }
  const answers = (): Array<UserInputAnswerEntry> =>
    prompt.questions.flatMap((q) => {
      const d = drafts.get(q.id) ?? emptyDraft
      if (d.selected.length === 0 && d.text === "") return []
      const entry: UserInputAnswerEntry = { questionId: q.id, selectedOptionIds: d.selected as never }
      return [d.text === "" ? entry : { ...entry, text: d.text }]
    })

  return (
    <form
      className="card question-card"
      data-prompt={view.promptId}
      aria-label={prompt.title ?? "Question"}
      onSubmit={(e) => {
        e.preventDefault()
        void send(() => client.respond(view.promptId, answers()))
      }}
    >
      <h3>
        {prompt.title ?? "The agent asks"} {prompt.blocking && <span className="badge badge-warning">waiting</span>}
      </h3>
      {prompt.description !== undefined && <p className="muted">{prompt.description}</p>}
      {prompt.questions.map((q) => (
        <QuestionField
          key={q.id}
          question={q}
          draft={drafts.get(q.id) ?? emptyDraft}
          onChange={(d) => setDrafts((m) => new Map(m).set(q.id, d))}
        />
      ))}
      <div className="actions">
        <button type="submit" className="primary" disabled={sending}>
          Submit
        </button>
        <button
          type="button"
          disabled={sending}
          onClick={() => void send(() => client.dismiss(view.promptId, "empty"))}
        >
          Skip
        </button>
        <button
          type="button"
          disabled={sending}
          onClick={() => void send(() => client.dismiss(view.promptId, "cancelled"))}
        >
          Cancel
        </button>
      </div>
    </form>
  )
}

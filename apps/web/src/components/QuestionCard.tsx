import type { PlanbridgeClient } from "@planbridge/client"
import type { PromptView, UserInputAnswerEntry } from "@planbridge/contracts"
import { useEffect, useRef, useState } from "react"
import { markSeenPending, resolvedElsewhere } from "../state/answeredHere.ts"
import { clearDrafts, loadDrafts, saveDrafts, type Draft } from "../state/questionDrafts.ts"
import { PromptHeading, usePromptAnswer, type PromptOutcome } from "./promptAnswer.tsx"
import { QuestionField } from "./QuestionField.tsx"
import { ResolvedPrompt } from "./ResolvedPrompt.tsx"
import { UrlPromptCard } from "./UrlPromptCard.tsx"

const emptyDraft: Draft = { selected: [], text: "" }
const answered = (d: Draft | undefined) => d !== undefined && (d.selected.length > 0 || d.text !== "")

/** A question card: answer, skip or cancel; once resolved, what was answered and by whom. */
export const QuestionCard = ({ client, view }: { readonly client: PlanbridgeClient; readonly view: PromptView }) => {
  const [outcome, setOutcome] = useState<PromptOutcome>("none")
  if (view.status === "resolved" || outcome === "lost") {
    const elsewhere = outcome === "lost" || (outcome === "none" && resolvedElsewhere(view.promptId))
    return <ResolvedPrompt view={view} elsewhere={elsewhere} />
  }
  const url = view.prompt.url
  if (url !== undefined)
    return <UrlPromptCard client={client} view={view} url={url} outcome={outcome} setOutcome={setOutcome} />
  return <PendingQuestionCard client={client} view={view} setOutcome={setOutcome} />
}

/**
 * The card while it waits, driven by keyboard alone: it takes the focus when it appears (its
 * first unanswered question), 1–9 pick an option, a single choice moves on to the next question,
 * Enter submits. Drafts survive a reload (`questionDrafts.ts`). Submit with a required question
 * unanswered says which, and sends nothing: skipping is the Skip button, never an accident.
 */
const PendingQuestionCard = (props: {
  readonly client: PlanbridgeClient
  readonly view: PromptView
  readonly setOutcome: (o: PromptOutcome) => void
}) => {
  const { client, view, setOutcome } = props
  const prompt = view.prompt
  const [drafts, setDrafts] = useState<ReadonlyMap<string, Draft>>(() => loadDrafts(view.promptId))
  const [problem, setProblem] = useState<string | undefined>(undefined)
  const fields = useRef<Array<HTMLFieldSetElement | null>>([])
  const submitButton = useRef<HTMLButtonElement | null>(null)
  markSeenPending(view.promptId)

  const focusQuestion = (index: number) => {
    const field = fields.current[index]
    if (field !== null && field !== undefined) field.focus()
    else submitButton.current?.focus()
  }
  useEffect(() => {
    const first = prompt.questions.findIndex((q) => !answered(drafts.get(q.id)))
    focusQuestion(first === -1 ? prompt.questions.length : first)
    // Only when the card appears (no dependencies): later moves are the user's own.
  }, [])

  const change = (questionId: string, d: Draft) =>
    setDrafts((m) => {
      const next = new Map(m).set(questionId, d)
      saveDrafts(view.promptId, prompt.questions, next)
      return next
    })
  const { sending, send } = usePromptAnswer(view.promptId, setOutcome, () => {
    // The clear text of every answer leaves this tab once sent (secrets included).
    clearDrafts(view.promptId)
    setDrafts(new Map())
  })
  const answers = (): Array<UserInputAnswerEntry> =>
    prompt.questions.flatMap((q) => {
      const d = drafts.get(q.id) ?? emptyDraft
      if (!answered(d)) return []
      const entry: UserInputAnswerEntry = { questionId: q.id, selectedOptionIds: d.selected as never }
      return [d.text === "" ? entry : { ...entry, text: d.text }]
    })
  const submit = () => {
    const missing = prompt.questions.findIndex((q) => !answered(drafts.get(q.id)) && q.required)
    const none = answers().length === 0
    if (missing !== -1 || none) {
      const at = missing !== -1 ? missing : 0
      setProblem(`Answer “${prompt.questions[at]!.label}” first, or press Skip to send no answer.`)
      focusQuestion(at)
      return
    }
    setProblem(undefined)
    void send(() => client.respond(view.promptId, answers()))
  }

  return (
    <form
      className="card question-card"
      data-prompt={view.promptId}
      aria-label={prompt.title ?? "Question"}
      onSubmit={(e) => {
        e.preventDefault()
        submit()
      }}
      onKeyDown={(e) => {
        // Enter submits from anywhere in the card but a button (which it presses) or a text area.
        if (e.key !== "Enter" || e.target instanceof HTMLButtonElement || e.target instanceof HTMLTextAreaElement)
          return
        e.preventDefault()
        submit()
      }}
    >
      <PromptHeading view={view} fallback="The agent asks" />
      {prompt.description !== undefined && <p className="muted">{prompt.description}</p>}
      {prompt.questions.map((q, index) => (
        <QuestionField
          key={q.id}
          question={q}
          draft={drafts.get(q.id) ?? emptyDraft}
          onChange={(d) => change(q.id, d)}
          position={{ index, count: prompt.questions.length }}
          onPicked={() => focusQuestion(index + 1)}
          fieldRef={(el) => {
            fields.current[index] = el
          }}
        />
      ))}
      {problem !== undefined && (
        <p className="form-error" role="alert">
          {problem}
        </p>
      )}
      <div className="actions">
        <button ref={submitButton} type="submit" className="primary" disabled={sending}>
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

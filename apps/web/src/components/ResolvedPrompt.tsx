import type { PromptView } from "@planbridge/contracts"
import { resolutionLabel } from "../state/resolutionLabels.ts"
import { ResolvedByNote } from "./ResolvedByNote.tsx"

/**
 * A resolved card: its questions, each with its answer (secret ones only as "answered (hidden)",
 * "not answered" when it was skipped, cancelled or the agent stopped), and who resolved it.
 */
export const ResolvedPrompt = ({ view, elsewhere }: { readonly view: PromptView; readonly elsewhere: boolean }) => {
  const byId = new Map((view.answers ?? []).map((a) => [a.questionId as string, a]))
  return (
    <div className="card question-card resolved" data-prompt={view.promptId}>
      <h3>
        {view.prompt.title ?? "Question"} <span className="badge">{resolutionLabel(view.resolution)}</span>
        {elsewhere && view.resolution === "answered" && (
          <span className="badge badge-info elsewhere">answered on another client</span>
        )}{" "}
        <ResolvedByNote by={view.resolvedBy} />
      </h3>
      <dl>
        {view.prompt.questions.map((q) => {
          const a = byId.get(q.id)
          const labels = (a?.selectedOptionIds ?? []).map((id) => q.options.find((o) => o.id === id)?.label ?? id)
          const shown =
            a === undefined
              ? "not answered"
              : a.redacted === true || q.secret
                ? "answered (hidden)"
                : [...labels, ...(a.text !== undefined ? [a.text] : [])].join(", ")
          return (
            <div key={q.id}>
              <dt>{q.label}</dt>
              <dd className={a === undefined ? "muted" : ""}>{shown}</dd>
            </div>
          )
        })}
      </dl>
      {view.reason !== null && <p className="muted">{view.reason}</p>}
    </div>
  )
}

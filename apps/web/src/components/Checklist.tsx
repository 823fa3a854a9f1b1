import type { PlanView } from "@planbridge/contracts"
import type { ChecklistRevision } from "../state/threadExtras.ts"

const mark = { pending: "○", inProgress: "◐", completed: "●", cancelled: "⊘" } as const

/** The newest checklist ("n of m" steps done), and every earlier revision this page saw. */
export const Checklist = (props: { readonly latest: PlanView; readonly history: ReadonlyArray<ChecklistRevision> }) => {
  const { plan, revision } = props.latest
  const earlier = props.history.slice(0, -1).reverse()
  const done = plan.steps.filter((s) => s.status === "completed").length
  return (
    <section className="panel checklist" aria-label="Checklist">
      <h2>
        Checklist{" "}
        <span className="checklist-progress">
          {done} of {plan.steps.length}
        </span>{" "}
        <span className="muted">revision {revision}</span>
      </h2>
      {plan.explanation !== null && <p className="muted">{plan.explanation}</p>}
      <ol>
        {plan.steps.map((s, i) => (
          <li key={s.id ?? i} className={`step step-${s.status}`} data-status={s.status}>
            <span aria-hidden="true">{mark[s.status]}</span>{" "}
            {s.status === "inProgress" ? (s.activeForm ?? s.step) : s.step}
          </li>
        ))}
      </ol>
      {earlier.length > 0 && (
        <details>
          <summary>Earlier revisions ({earlier.length})</summary>
          {earlier.map((r) => (
            <div key={`${r.turnId}-${r.revision}`} className="revision">
              <div className="muted">revision {r.revision}</div>
              <ul>
                {r.plan.steps.map((s, i) => (
                  <li key={i} className={`step step-${s.status}`}>
                    {mark[s.status]} {s.step}
                  </li>
                ))}
              </ul>
            </div>
          ))}
        </details>
      )}
    </section>
  )
}

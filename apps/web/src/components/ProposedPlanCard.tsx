import type { PlanbridgeClient } from "@planbridge/client"
import type { ProposedPlanView, ThreadSnapshot } from "@planbridge/contracts"
import { useEffect, useRef, useState } from "react"
import { toastError } from "../state/toasts.ts"
import { Markdown } from "./Markdown.tsx"
import { ResolvedByNote } from "./ResolvedByNote.tsx"

type Editing = "none" | "edit" | "reject"

/**
 * A proposed plan as Markdown. Where the session can exit plan mode (`supportsExitPlanMode`) it is
 * approved or rejected, with edits (`supportsPlanEdits`) or feedback (`supportsPlanFeedback`) only
 * where the session takes them; elsewhere the next turn implements it. The provider's own file for
 * the plan (`filePath`) is its internal state, not shown. Where the agent reviews a plan with
 * choices of its own (`supportsPlanOptions`: approve and switch mode, approve and clear the
 * context, revise), the card offers those, as the agent labels them.
 */
export const ProposedPlanCard = (props: {
  readonly client: PlanbridgeClient
  readonly thread: ThreadSnapshot
  readonly plan: ProposedPlanView
}) => {
  const { plan, thread, client } = props
  const [editing, setEditing] = useState<Editing>("none")
  const [text, setText] = useState("")
  const [sending, setSending] = useState(false)
  const markdown = plan.editedMarkdown ?? plan.markdown ?? plan.streamedText
  const decidable = plan.status === "completed" && thread.capabilities?.supportsExitPlanMode === true
  // Only what the session accepts is offered: an edit or feedback it refuses would strand the form.
  const canEdit = thread.capabilities?.supportsPlanEdits === true
  const canGiveFeedback = thread.capabilities?.supportsPlanFeedback === true
  const turnRunning = thread.turns.some((t) => t.status === "inProgress")
  // The agent's own review choices (`supportsPlanOptions`): the options of the plan's pending request.
  const agentOptions =
    thread.capabilities?.supportsPlanOptions === true
      ? (thread.requests.find((r) => r.planId === plan.planId && r.status === "pending")?.options ?? [])
      : []
  // A plan that waits for a decision is brought into view.
  const card = useRef<HTMLElement | null>(null)
  useEffect(() => {
    if (decidable && plan.decision === null) card.current?.scrollIntoView({ block: "nearest" })
  }, [decidable, plan.decision])

  const decide = async (decision: "approved" | "rejected" | "edited", extra: object) => {
    setSending(true)
    try {
      await client.decidePlan({ threadId: thread.threadId, planId: plan.planId, decision, ...extra })
      setEditing("none")
    } catch (e) {
      toastError("plan.decide", e)
    } finally {
      setSending(false)
    }
  }

  return (
    <article
      ref={card}
      className={`card plan-card plan-${plan.status}`}
      data-plan={plan.planId}
      aria-label="Proposed plan"
    >
      <h3>
        Proposed plan <span className="badge">{plan.decision === "edited" ? "approved with edits" : plan.status}</span>{" "}
        <ResolvedByNote by={plan.resolvedBy} />
      </h3>
      {editing === "edit" ? (
        <textarea aria-label="Edited plan" rows={12} value={text} onChange={(e) => setText(e.target.value)} />
      ) : (
        <Markdown source={markdown} />
      )}
      {plan.feedback !== null && <p className="muted">Feedback: {plan.feedback}</p>}
      {editing === "reject" && (
        <textarea
          aria-label="Feedback"
          rows={3}
          placeholder="What should change?"
          value={text}
          onChange={(e) => setText(e.target.value)}
        />
      )}
      {decidable && (
        <div className="actions">
          {editing === "none" &&
            agentOptions.map((o) => (
              <button
                key={o.id}
                className={o.kind === "allow_once" ? "primary" : undefined}
                disabled={sending}
                onClick={() =>
                  void decide(o.kind?.startsWith("allow") === true ? "approved" : "rejected", { optionId: o.id })
                }
              >
                {o.label}
              </button>
            ))}
          {editing === "none" && agentOptions.length === 0 && (
            <>
              <button className="primary" disabled={sending} onClick={() => void decide("approved", {})}>
                Approve
              </button>
              {canEdit && (
                <button
                  disabled={sending}
                  onClick={() => {
                    setText(markdown)
                    setEditing("edit")
                  }}
                >
                  Edit…
                </button>
              )}
              {canGiveFeedback ? (
                <button
                  disabled={sending}
                  onClick={() => {
                    setText("")
                    setEditing("reject")
                  }}
                >
                  Reject…
                </button>
              ) : (
                <button disabled={sending} onClick={() => void decide("rejected", {})}>
                  Reject
                </button>
              )}
            </>
          )}
          {editing === "edit" && (
            <button
              className="primary"
              disabled={sending}
              onClick={() => void decide("edited", { editedMarkdown: text })}
            >
              Approve with edits
            </button>
          )}
          {editing === "reject" && (
            <button
              disabled={sending}
              onClick={() => void decide("rejected", text.trim() === "" ? {} : { feedback: text.trim() })}
            >
              Reject with feedback
            </button>
          )}
          {editing !== "none" && (
            <button disabled={sending} onClick={() => setEditing("none")}>
              Back
            </button>
          )}
        </div>
      )}
      {plan.status === "completed" && thread.capabilities?.supportsExitPlanMode === false && (
        <div className="actions">
          <button
            className="primary"
            disabled={turnRunning}
            onClick={() =>
              void client
                .startTurn(
                  thread.threadId,
                  "Implement the plan.",
                  thread.capabilities?.supportsModeSwitching ? "default" : undefined
                )
                .catch((e) => toastError("turn.start", e))
            }
          >
            Implement this plan
          </button>
          <span className="muted">This agent takes a plan by being asked to carry it out.</span>
        </div>
      )}
    </article>
  )
}

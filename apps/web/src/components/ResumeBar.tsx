import type { PlanbridgeClient } from "@planbridge/client"
import type { ThreadId } from "@planbridge/contracts"
import { useState } from "react"
import type { SessionEndView } from "../state/sessionEnd.ts"
import { toastError } from "../state/toasts.ts"

/**
 * A thread whose provider session is not live: why, and a Resume control when the provider can
 * resume. The resumed session's events arrive in the same followed thread, so nothing else
 * changes here: the bar goes away once `session.started` makes the thread live again.
 */
export const ResumeBar = (props: {
  readonly client: PlanbridgeClient
  readonly threadId: ThreadId
  readonly view: SessionEndView
}) => {
  const [resuming, setResuming] = useState(false)
  const resume = () => {
    setResuming(true)
    props.client.resumeThread(props.threadId).then(
      () => setResuming(false),
      (error) => {
        setResuming(false)
        // resume_failed, unsupported, auth_required, …: the typed code and the server's message.
        toastError("thread.resume", error)
      }
    )
  }
  return (
    <div className="resume-bar" role="status" data-testid="session-ended">
      <span className="resume-reason">{props.view.reason}</span>
      {props.view.canResume ? (
        <button type="button" className="primary" disabled={resuming} onClick={resume}>
          {resuming ? "Resuming…" : "Resume"}
        </button>
      ) : (
        <span className="muted">This provider cannot resume a session: start a new one.</span>
      )}
    </div>
  )
}

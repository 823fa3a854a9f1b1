import { PlanbridgeError, type PlanbridgeClient } from "@planbridge/client"
import type { RequestView } from "@planbridge/contracts"
import { useEffect, useRef, useState } from "react"
import { markAnsweredHere, markSeenPending, resolvedElsewhere } from "../state/answeredHere.ts"
import { resolutionLabel } from "../state/resolutionLabels.ts"
import { toastError } from "../state/toasts.ts"
import { ApprovalDetail } from "./ApprovalDetail.tsx"
import { ResolvedByNote } from "./ResolvedByNote.tsx"

/** An approval request with the provider's own options, as it sent them. */
export const ApprovalCard = (props: { readonly client: PlanbridgeClient; readonly request: RequestView }) => {
  const { request } = props
  const [sending, setSending] = useState(false)
  const [lostRace, setLostRace] = useState(false)
  const resolved = request.status === "resolved" || lostRace
  if (!resolved) markSeenPending(request.requestId)
  // A request that appears while the user reads elsewhere is brought into view.
  const card = useRef<HTMLElement | null>(null)
  useEffect(() => {
    if (request.status === "pending") card.current?.scrollIntoView({ block: "nearest" })
  }, [request.status])
  // The option chosen, by its label; otherwise why it closed, in words.
  const chosen =
    request.options.find((o) => o.id === request.optionId)?.label ??
    request.optionId ??
    resolutionLabel(request.resolution)
  return (
    <article ref={card} className={`card approval-card ${resolved ? "resolved" : ""}`} data-request={request.requestId}>
      <h3>
        {request.title ?? "The agent asks for approval"} {resolved && <span className="badge">{chosen}</span>}
        {resolved && (lostRace || resolvedElsewhere(request.requestId)) && request.resolution === "responded" && (
          <span className="badge badge-info elsewhere">answered on another client</span>
        )}
        {resolved && " "}
        {resolved && <ResolvedByNote by={request.resolvedBy} />}
      </h3>
      {request.detail !== null && <ApprovalDetail detail={request.detail} />}
      {!resolved && (
        <div className="actions">
          {request.options.map((o) => (
            <button
              key={o.id}
              className={o.kind?.startsWith("allow") === true ? "primary" : ""}
              disabled={sending}
              onClick={() => {
                setSending(true)
                props.client
                  .respondToRequest(request.requestId, o.id)
                  .then(() => markAnsweredHere(request.requestId))
                  .catch((e: unknown) =>
                    e instanceof PlanbridgeError && e.code === "already_resolved"
                      ? setLostRace(true)
                      : toastError("request.respond", e)
                  )
                  .finally(() => setSending(false))
              }}
            >
              {o.label}
            </button>
          ))}
        </div>
      )}
    </article>
  )
}

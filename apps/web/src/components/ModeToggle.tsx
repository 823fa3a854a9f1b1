import type { PlanbridgeClient } from "@planbridge/client"
import type { OperatingMode, ProviderCapabilities, ThreadSnapshot } from "@planbridge/contracts"
import { toastError } from "../state/toasts.ts"

/** Only for sessions whose capabilities allow switching, and only the modes they have. */
export const ModeToggle = (props: {
  readonly client: PlanbridgeClient
  readonly thread: ThreadSnapshot
  readonly capabilities: ProviderCapabilities
}) => {
  const c = props.capabilities
  if (!c.supportsModeSwitching) return null
  const modes: Array<OperatingMode> = ["default"]
  if (c.supportsPlanMode) modes.push("plan")
  if (c.supportsAskMode) modes.push("ask")
  return (
    <div className="mode-toggle" role="radiogroup" aria-label="Mode">
      {modes.map((mode) => (
        <button
          key={mode}
          role="radio"
          aria-checked={props.thread.mode === mode}
          className={props.thread.mode === mode ? "selected" : ""}
          onClick={() => props.client.setMode(props.thread.threadId, mode).catch((e) => toastError("mode.set", e))}
        >
          {mode}
        </button>
      ))}
    </div>
  )
}

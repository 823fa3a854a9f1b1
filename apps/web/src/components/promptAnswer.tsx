import { PlanbridgeError } from "@planbridge/client"
import type { PromptView } from "@planbridge/contracts"
import { useState } from "react"
import { markAnsweredHere } from "../state/answeredHere.ts"
import { toastError } from "../state/toasts.ts"

/** This tab's own answer to a prompt: until the server said which answer won, a card claims neither. */
export type PromptOutcome = "none" | "sending" | "won" | "lost"

/**
 * Sends one answer (respond or dismiss) for a prompt card and tracks its outcome: `won` once the
 * server took it, `lost` when another client's answer won first (`already_resolved`, not an
 * error), otherwise a toast and back to `none`. `settled` runs either way (e.g. clearing drafts).
 */
export const usePromptAnswer = (
  promptId: PromptView["promptId"],
  setOutcome: (o: PromptOutcome) => void,
  settled?: () => void
) => {
  const [sending, setSending] = useState(false)
  const send = async (action: () => Promise<unknown>) => {
    setSending(true)
    setOutcome("sending")
    try {
      await action()
      markAnsweredHere(promptId)
      setOutcome("won")
    } catch (e) {
      const lost = e instanceof PlanbridgeError && e.code === "already_resolved"
      setOutcome(lost ? "lost" : "none")
      if (!lost) toastError("answer", e)
    } finally {
      settled?.()
      setSending(false)
    }
  }
  return { sending, send }
}

/** A prompt card's heading: its title (or what kind of ask it is) and whether the agent waits on it. */
export const PromptHeading = (props: { readonly view: PromptView; readonly fallback: string }) => (
  <h3>
    {props.view.prompt.title ?? props.fallback}{" "}
    {props.view.prompt.blocking && <span className="badge badge-warning">waiting</span>}
  </h3>
)

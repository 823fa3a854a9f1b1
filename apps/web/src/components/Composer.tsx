import { PlanbridgeError, type PlanbridgeClient } from "@planbridge/client"
import type { ThreadSnapshot } from "@planbridge/contracts"
import { useState } from "react"
import { toastError } from "../state/toasts.ts"

/**
 * Sends a turn, or interrupts the running one. Like the server, it refuses a new turn while a
 * blocking question waits, and while a turn runs.
 */
export const Composer = ({
  client,
  thread
}: {
  readonly client: PlanbridgeClient
  readonly thread: ThreadSnapshot
}) => {
  const [text, setText] = useState("")
  /** Why the text in the box was not sent (it stays there to shorten or split). */
  const [notSent, setNotSent] = useState<string | undefined>(undefined)
  const running = thread.turns.some((t) => t.status === "inProgress")
  const blocked = thread.prompts.some((p) => p.status === "pending" && p.prompt.blocking)
  const stopped = thread.state === "stopped"
  const reason = stopped
    ? thread.capabilities?.supportsResume === true
      ? "The session has ended: resume it to continue."
      : "The session has ended."
    : blocked
      ? "Answer or dismiss the question above first."
      : running
        ? "The agent is working."
        : undefined
  return (
    <form
      className="composer"
      onSubmit={(e) => {
        e.preventDefault()
        if (reason !== undefined || text.trim() === "") return
        const sent = text
        setText("")
        setNotSent(undefined)
        client.startTurn(thread.threadId, sent).catch((err) => {
          setText(sent)
          if (err instanceof PlanbridgeError && err.code === "frame_too_large") setNotSent(tooLargeText(sent, client))
          else toastError("turn.start", err)
        })
      }}
    >
      <textarea
        aria-label="Message"
        rows={3}
        value={text}
        placeholder={reason ?? "Message the agent…"}
        onChange={(e) => {
          setText(e.target.value)
          setNotSent(undefined)
        }}
        onKeyDown={(e) => {
          if (e.key === "Enter" && (e.metaKey || e.ctrlKey)) e.currentTarget.form?.requestSubmit()
        }}
      />
      {notSent !== undefined && (
        <p className="composer-error" role="alert">
          {notSent}
        </p>
      )}
      <div className="actions">
        {reason !== undefined && <span className="muted composer-reason">{reason}</span>}
        <button type="submit" className="primary" disabled={reason !== undefined || text.trim() === ""}>
          Send
        </button>
        {running && (
          <button
            type="button"
            onClick={() => client.interrupt(thread.threadId).catch((err) => toastError("turn.interrupt", err))}
          >
            Interrupt
          </button>
        )}
      </div>
    </form>
  )
}

const kib = (bytes: number): string => `${Math.ceil(bytes / 1024)} KiB`

/** The refusal of a message above the server's frame limit (`welcome.limits`), in the user's terms. */
const tooLargeText = (text: string, client: PlanbridgeClient): string => {
  const size = kib(new TextEncoder().encode(text).byteLength)
  const limit = client.limits
  return limit === undefined
    ? `Not sent: this message (${size}) is larger than the server takes.`
    : `Not sent: this message (${size}) is larger than the server takes: at most ${kib(limit.maxFrameBytes)} per message.`
}

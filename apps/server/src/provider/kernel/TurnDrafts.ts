import type { ItemId, OperatingMode, RawNative, TurnId } from "@planbridge/contracts"
import type { EventDraft } from "./EventDraft.ts"
import { sessionStateDraft } from "./Mapped.ts"

/**
 * The canonical events of a turn's edges, the same for every provider. A turn we start with the
 * user's text (Claude's, ACP's prompt; Codex reports its own): `turn.started` in its mode, what
 * the user said as the turn's completed `user_message` item (when there is text), the session
 * running.
 */
export const turnStartedDrafts = (
  turnId: TurnId,
  mode: OperatingMode,
  raw: RawNative,
  user: { readonly itemId: ItemId; readonly text: string | undefined }
): ReadonlyArray<EventDraft> => [
  { type: "turn.started", turnId, raw, payload: { mode } },
  ...(user.text === undefined
    ? []
    : [
        {
          type: "item.completed",
          turnId,
          itemId: user.itemId,
          raw,
          payload: { itemType: "user_message", status: "completed", text: user.text }
        } as const
      ]),
  sessionStateDraft("running", [], raw)
]

/** A turn cut short (the provider exited during it): `turn.completed`, failed, saying why. */
export const turnFailed = (turnId: TurnId, message: string, raw: RawNative): EventDraft => ({
  type: "turn.completed",
  turnId,
  raw,
  payload: { status: "failed", error: { message } }
})

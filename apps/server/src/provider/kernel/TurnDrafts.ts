import type { ItemId, OperatingMode, PlanSnapshot, PlanStep, RawNative, TurnId } from "@planbridge/contracts"
import type { EventDraft } from "./EventDraft.ts"
import { sessionStateDraft } from "./Mapped.ts"

/**
 * A turn we start with the user's text (Claude's, ACP's; Codex reports its own): `turn.started`
 * in its mode, the text (if any) as the turn's completed `user_message` item, the session running.
 */
export const turnStartedDrafts = (
  turnId: TurnId,
  mode: OperatingMode,
  raw: RawNative,
  { itemId, text }: { readonly itemId: ItemId; readonly text: string | undefined }
): ReadonlyArray<EventDraft> => {
  const said = (text: string) => ({ itemType: "user_message", status: "completed", text }) as const
  const user = text === undefined ? [] : [{ type: "item.completed", turnId, itemId, raw, payload: said(text) } as const]
  return [{ type: "turn.started", turnId, raw, payload: { mode } }, ...user, sessionStateDraft("running", [], raw)]
}

/** A turn cut short (the provider exited during it): `turn.completed`, failed, saying why. */
export const turnFailed = (turnId: TurnId, message: string, raw: RawNative): EventDraft => ({
  type: "turn.completed",
  turnId,
  raw,
  payload: { status: "failed", error: { message } }
})

/** `turn.plan.updated`: the turn's whole checklist (todo list, plan steps), replacing the one before. */
export const checklistDraft = (
  turnId: TurnId,
  steps: ReadonlyArray<PlanStep>,
  source: PlanSnapshot["source"],
  raw: RawNative,
  explanation: string | null = null
): EventDraft => ({
  type: "turn.plan.updated",
  turnId,
  raw,
  payload: { plan: { explanation, steps: [...steps], source } }
})

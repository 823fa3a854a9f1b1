import type { ItemId, PlanId, RawNative, SessionState, TokenUsage, TurnId } from "@planbridge/contracts"
import { Result, Schema } from "effect"
import {
  ErrorNotification,
  ItemDelta,
  ItemNotification,
  SummaryNotification,
  ThreadStatusChanged,
  ThreadTokenUsageUpdated,
  TurnNotification,
  TurnPlanUpdated,
  WarningNotification,
  type ThreadStatus
} from "./CodexProtocol.ts"
import { deltaStreamKind, itemFields } from "./CodexItems.ts"
import { endRequestsOfTurn, mapServerRequestResolved } from "./CodexServerRequests.ts"
import { type CodexMappingState, type Mapped } from "./CodexMappingState.ts"
import { rawOf } from "../kernel/EventDraft.ts"
import { withEntry, withMember, withoutEntry } from "../kernel/immutable.ts"
import { definedFields } from "../../util/definedFields.ts"
import { andThen, decodedOr, mapped, warned } from "../kernel/Mapped.ts"
import { checklistDraft } from "../kernel/TurnDrafts.ts"

/**
 * Codex notifications → canonical events. Upserts by id, never by position: `turn/completed`
 * only merges status, error and duration (its `items` are a summary, so the items collected
 * from `item/*` stay as they are).
 */

const NOTIFICATION = "codex.app-server.notification"

/** Informational notifications with no canonical counterpart; received and deliberately dropped. */
const IGNORED = new Set([
  "thread/started",
  "thread/settings/updated",
  "thread/name/updated",
  "thread/readState/changed",
  "thread/goal/updated",
  "thread/goal/cleared",
  "account/rateLimits/updated",
  "account/updated",
  "remoteControl/status/changed",
  "mcpServer/startupStatus/updated",
  "item/reasoning/summaryPartAdded",
  "item/fileChange/patchUpdated",
  "item/commandExecution/terminalInteraction",
  "turn/diff/updated",
  "skills/changed",
  "app/list/updated",
  "fs/changed",
  "hook/started",
  "hook/completed",
  "rawResponseItem/completed",
  "rawResponse/completed"
])

const sessionState = (
  status: ThreadStatus
): { readonly state: SessionState; readonly flags: ReadonlyArray<string>; readonly detail?: string } => {
  switch (status.type) {
    case "idle":
      return { state: "idle", flags: [] }
    case "active":
      return {
        state: status.activeFlags.some((f) => f.startsWith("waitingOn")) ? "waiting" : "running",
        flags: status.activeFlags
      }
    case "systemError":
      return { state: "error", flags: [], detail: "systemError" }
    case "notLoaded":
      return { state: "stopped", flags: [], detail: "notLoaded" }
  }
}

const addUsage = (
  a: TokenUsage | undefined,
  b: (typeof ThreadTokenUsageUpdated.Type)["tokenUsage"]["last"]
): TokenUsage => ({
  inputTokens: (a?.inputTokens ?? 0) + b.inputTokens,
  outputTokens: (a?.outputTokens ?? 0) + b.outputTokens,
  cachedInputTokens: (a?.cachedInputTokens ?? 0) + b.cachedInputTokens,
  reasoningOutputTokens: (a?.reasoningOutputTokens ?? 0) + b.reasoningOutputTokens,
  totalTokens: (a?.totalTokens ?? 0) + b.totalTokens
})

const reportOnce = (s: CodexMappingState, key: string, code: string, message: string, raw: RawNative): Mapped =>
  s.reported.has(key) ? mapped(s) : warned({ ...s, reported: withMember(s.reported, key) }, code, message, raw)

const ids = (turnId: string, itemId: string) => ({ turnId: turnId as TurnId, itemId: itemId as ItemId })

/** A message's params (or result) decoded by `schema`, then mapped; a decode failure is a warning. */
export const decoded =
  <S extends Schema.Decoder<unknown>>(
    schema: S,
    map: (s: CodexMappingState, params: S["Type"], raw: RawNative) => Mapped
  ) =>
  (s: CodexMappingState, method: string, params: unknown, raw: RawNative): Mapped => {
    const failed = (why: string) => warned(s, "codex.decode_failed", `${method}: ${why}`, raw)
    return decodedOr(schema, failed)(params, (d) => map(s, d, raw))
  }

const delta = (method: string) =>
  decoded(ItemDelta, (s, d, raw) => {
    const streamKind = deltaStreamKind[method] ?? "assistant_text"
    const at = ids(d.turnId, d.itemId)
    const content = { type: "content.delta", ...at, raw, payload: { streamKind, delta: d.delta } } as const
    if (streamKind !== "plan_text") return mapped(s, content)
    const planDelta = { planId: d.itemId as PlanId, delta: d.delta }
    return mapped(s, content, { type: "plan.proposed.delta", ...at, raw, payload: planDelta })
  })

const item = (phase: "started" | "completed") =>
  decoded(ItemNotification, (s, d, raw) => {
    const item = itemFields(d.item, phase)
    if (Result.isFailure(item)) return warned(s, "codex.decode_failed", `item/${phase}: ${item.failure}`, raw)
    const { itemId, ...fields } = item.success
    const at = ids(d.turnId, itemId)
    const itemDraft = { type: `item.${phase}`, ...at, raw, payload: fields } as const
    if (phase === "started" || fields.itemType !== "plan") return mapped(s, itemDraft)
    // The completed item is authoritative; the deltas need not add up to it.
    const plan = { planId: itemId as PlanId, markdown: fields.text ?? "" }
    return mapped(s, itemDraft, { type: "plan.proposed.completed", ...at, raw, payload: plan })
  })

const turnCompleted = decoded(TurnNotification, (s, { turn }, raw) =>
  andThen(endRequestsOfTurn(s, turn.id, turn.status, raw), (s) => {
    const usage = s.turnUsage.get(turn.id)
    const next = {
      ...s,
      activeTurnId: s.activeTurnId === turn.id ? null : s.activeTurnId,
      turnUsage: withoutEntry(s.turnUsage, turn.id)
    }
    return mapped(next, {
      type: "turn.completed",
      turnId: turn.id as TurnId,
      raw,
      payload: {
        status: turn.status === "inProgress" ? "completed" : turn.status,
        ...definedFields({ error: turn.error ?? undefined, usage, durationMs: turn.durationMs ?? undefined })
      }
    })
  })
)

/** A summary notification (`configWarning`, `deprecationNotice`) as a warning of `code`. */
const summary = (code: string) =>
  decoded(SummaryNotification, (s, d, raw) => warned(s, code, d.summary, raw, d.details ?? undefined))

type Handler = (s: CodexMappingState, method: string, params: unknown, raw: RawNative) => Mapped

const handlers: Readonly<Record<string, Handler>> = {
  "thread/status/changed": decoded(ThreadStatusChanged, (s, d, raw) => {
    const { state, flags, detail } = sessionState(d.status)
    return mapped(s, { type: "session.state.changed", raw, payload: { state, flags, ...definedFields({ detail }) } })
  }),
  "turn/started": decoded(TurnNotification, (s, { turn }, raw) =>
    mapped(
      { ...s, activeTurnId: turn.id },
      {
        type: "turn.started",
        turnId: turn.id as TurnId,
        raw,
        payload: { mode: s.mode }
      }
    )
  ),
  "turn/completed": turnCompleted,
  "item/started": item("started"),
  "item/completed": item("completed"),
  "turn/plan/updated": decoded(TurnPlanUpdated, (s, d, raw) =>
    mapped(s, checklistDraft(d.turnId as TurnId, d.plan, "native", raw, d.explanation))
  ),
  "thread/tokenUsage/updated": decoded(ThreadTokenUsageUpdated, (s, d) => {
    const usage = addUsage(s.turnUsage.get(d.turnId), d.tokenUsage.last)
    return mapped({ ...s, turnUsage: withEntry(s.turnUsage, d.turnId, usage) })
  }),
  "serverRequest/resolved": (s, _method, params, raw) => mapServerRequestResolved(s, params, raw),
  error: decoded(ErrorNotification, (s, d, raw) =>
    mapped(s, {
      type: "runtime.error",
      turnId: d.turnId as TurnId,
      raw,
      payload: { code: "codex.error", message: d.error.message, fatal: false, detail: { willRetry: d.willRetry } }
    })
  ),
  warning: decoded(WarningNotification, (s, d, raw) => warned(s, "codex.warning", d.message, raw)),
  configWarning: summary("codex.config_warning"),
  deprecationNotice: summary("codex.deprecation"),
  ...Object.fromEntries(Object.keys(deltaStreamKind).map((method) => [method, delta(method)]))
}

/** The notifications the mapping decodes with its schemas (the conformance test walks them). */
export const DecodedNotificationMethods: ReadonlyArray<string> = Object.keys(handlers)

export const mapNotification = (s: CodexMappingState, method: string, params: unknown, payload: unknown): Mapped => {
  const raw = rawOf(NOTIFICATION, method, payload)
  // One session is one Codex thread; a sub-agent's thread would corrupt its turns and items.
  const threadId = typeof params === "object" && params !== null && "threadId" in params ? params.threadId : undefined
  if (typeof threadId === "string" && s.nativeThreadId !== null && threadId !== s.nativeThreadId) {
    const message = `notifications of thread ${threadId} are not mapped into this session (reported once)`
    return reportOnce(s, `thread:${threadId}`, "codex.foreign_thread", message, raw)
  }
  const handler = handlers[method]
  if (handler !== undefined) return handler(s, method, params, raw)
  if (IGNORED.has(method)) return mapped(s)
  const message = `planbridge does not map the notification ${method} (reported once)`
  return reportOnce(s, `method:${method}`, "codex.unhandled_notification", message, raw)
}

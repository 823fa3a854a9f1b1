import type { ItemId, PlanId, SessionState, TokenUsage, TurnId } from "@planbridge/contracts"
import {
  decodeWith,
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
import { push, update, warning, type Draft } from "./CodexMappingState.ts"
import { rawOf } from "../kernel/EventDraft.ts"
import { withEntry, withoutEntry } from "../kernel/immutable.ts"
import { definedFields } from "../../util/definedFields.ts"

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

const reportOnce = (draft: Draft, key: string, code: string, message: string, raw: ReturnType<typeof rawOf>) => {
  if (draft.state.reported.has(key)) return
  update(draft, { reported: new Set([...draft.state.reported, key]) })
  warning(draft, code, message, raw)
}

export const mapNotification = (draft: Draft, method: string, params: unknown, payload: unknown): void => {
  const raw = rawOf(NOTIFICATION, method, payload)
  // One session is one Codex thread; a sub-agent's thread would corrupt its turns and items.
  const threadId = typeof params === "object" && params !== null && "threadId" in params ? params.threadId : undefined
  if (typeof threadId === "string" && draft.state.nativeThreadId !== null && threadId !== draft.state.nativeThreadId) {
    return reportOnce(
      draft,
      `thread:${threadId}`,
      "codex.foreign_thread",
      `notifications of thread ${threadId} are not mapped into this session (reported once)`,
      raw
    )
  }
  const decodeFailed = (message: string) => warning(draft, "codex.decode_failed", `${method}: ${message}`, raw)
  const ids = (turnId: string, itemId: string) => ({ turnId: turnId as TurnId, itemId: itemId as ItemId })

  if (method in deltaStreamKind) {
    const d = decodeWith(ItemDelta, params)
    if (!d.ok) return decodeFailed(d.message)
    const streamKind = deltaStreamKind[method] ?? "assistant_text"
    push(draft, {
      type: "content.delta",
      ...ids(d.value.turnId, d.value.itemId),
      raw,
      payload: { streamKind, delta: d.value.delta }
    })
    if (streamKind === "plan_text") {
      push(draft, {
        type: "plan.proposed.delta",
        turnId: d.value.turnId as TurnId,
        itemId: d.value.itemId as ItemId,
        raw,
        payload: { planId: d.value.itemId as PlanId, delta: d.value.delta }
      })
    }
    return
  }

  switch (method) {
    case "thread/status/changed": {
      const d = decodeWith(ThreadStatusChanged, params)
      if (!d.ok) return decodeFailed(d.message)
      const { state, flags, detail } = sessionState(d.value.status)
      return push(draft, {
        type: "session.state.changed",
        raw,
        payload: { state, flags, ...(detail ? { detail } : {}) }
      })
    }
    case "turn/started": {
      const d = decodeWith(TurnNotification, params)
      if (!d.ok) return decodeFailed(d.message)
      update(draft, { activeTurnId: d.value.turn.id })
      return push(draft, {
        type: "turn.started",
        turnId: d.value.turn.id as TurnId,
        raw,
        payload: { mode: draft.state.mode }
      })
    }
    case "turn/completed": {
      const d = decodeWith(TurnNotification, params)
      if (!d.ok) return decodeFailed(d.message)
      const turn = d.value.turn
      endRequestsOfTurn(draft, turn.id, turn.status, raw)
      const usage = draft.state.turnUsage.get(turn.id)
      push(draft, {
        type: "turn.completed",
        turnId: turn.id as TurnId,
        raw,
        payload: {
          status: turn.status === "inProgress" ? "completed" : turn.status,
          ...(turn.error !== null ? { error: { message: turn.error.message } } : {}),
          ...definedFields({ usage }),
          ...(turn.durationMs !== null ? { durationMs: turn.durationMs } : {})
        }
      })
      return update(draft, {
        activeTurnId: draft.state.activeTurnId === turn.id ? null : draft.state.activeTurnId,
        turnUsage: withoutEntry(draft.state.turnUsage, turn.id)
      })
    }
    case "item/started":
    case "item/completed": {
      const d = decodeWith(ItemNotification, params)
      if (!d.ok) return decodeFailed(d.message)
      const phase = method === "item/started" ? "started" : "completed"
      const item = itemFields(d.value.item, phase)
      if (!item.ok) return decodeFailed(item.message)
      const { itemId, ...fields } = item.fields
      push(draft, {
        type: phase === "started" ? "item.started" : "item.completed",
        ...ids(d.value.turnId, itemId),
        raw,
        payload: fields
      })
      if (phase === "completed" && fields.itemType === "plan") {
        // The completed item is authoritative; the deltas need not add up to it.
        push(draft, {
          type: "plan.proposed.completed",
          ...ids(d.value.turnId, itemId),
          raw,
          payload: { planId: itemId as PlanId, markdown: fields.text ?? "" }
        })
      }
      return
    }
    case "turn/plan/updated": {
      const d = decodeWith(TurnPlanUpdated, params)
      if (!d.ok) return decodeFailed(d.message)
      return push(draft, {
        type: "turn.plan.updated",
        turnId: d.value.turnId as TurnId,
        raw,
        payload: {
          plan: {
            explanation: d.value.explanation,
            steps: d.value.plan.map((s) => ({ step: s.step, status: s.status })),
            source: "native"
          }
        }
      })
    }
    case "thread/tokenUsage/updated": {
      const d = decodeWith(ThreadTokenUsageUpdated, params)
      if (!d.ok) return decodeFailed(d.message)
      const usage = addUsage(draft.state.turnUsage.get(d.value.turnId), d.value.tokenUsage.last)
      return update(draft, { turnUsage: withEntry(draft.state.turnUsage, d.value.turnId, usage) })
    }
    case "serverRequest/resolved":
      return mapServerRequestResolved(draft, params, raw)
    case "error": {
      const d = decodeWith(ErrorNotification, params)
      if (!d.ok) return decodeFailed(d.message)
      return push(draft, {
        type: "runtime.error",
        turnId: d.value.turnId as TurnId,
        raw,
        payload: {
          code: "codex.error",
          message: d.value.error.message,
          fatal: false,
          detail: { willRetry: d.value.willRetry }
        }
      })
    }
    case "warning": {
      const d = decodeWith(WarningNotification, params)
      if (!d.ok) return decodeFailed(d.message)
      return warning(draft, "codex.warning", d.value.message, raw)
    }
    case "configWarning":
    case "deprecationNotice": {
      const d = decodeWith(SummaryNotification, params)
      if (!d.ok) return decodeFailed(d.message)
      const code = method === "configWarning" ? "codex.config_warning" : "codex.deprecation"
      return warning(draft, code, d.value.summary, raw, d.value.details ?? undefined)
    }
    default:
      if (IGNORED.has(method)) return
      return reportOnce(
        draft,
        `method:${method}`,
        "codex.unhandled_notification",
        `planbridge does not map the notification ${method} (reported once)`,
        raw
      )
  }
}

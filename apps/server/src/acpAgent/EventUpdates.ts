import type * as acp from "@agentclientprotocol/sdk/unstable"
import type { ItemStatus, ItemType, PlanSnapshot, RuntimeEvent, RuntimeEventOf } from "@planbridge/contracts"

/**
 * Canonical events as ACP `session/update`s: what an editor shows of a Planbridge thread while
 * it runs. Pure, given what the session remembers (`UpdateContext`); prompts and requests are
 * not here (they become requests to the editor, `EditorAsks.ts`).
 */

/** What the mapping needs to know beyond the event. */
export interface UpdateContext {
  /** The editor advertised `plan` (plan_update): a proposed plan goes there, else as text. */
  readonly planUpdates: boolean
  /** Items whose text arrived as deltas: their completion does not repeat it. */
  readonly streamedItems: Set<string>
  /** Turns this editor started: their user message is on its screen already. */
  readonly ownTurns: Set<string>
}

const text = (value: string): acp.ContentBlock => ({ type: "text", text: value })

const toolKinds: Partial<Record<ItemType, acp.ToolKind>> = { command: "execute", file_change: "edit" }
const toolItemTypes: ReadonlySet<ItemType> = new Set(["tool_call", "command", "file_change", "other"])

export const toolStatusOf = (status: ItemStatus): acp.ToolCallStatus =>
  status === "inProgress" ? "in_progress" : status === "declined" ? "failed" : status

/** A checklist as ACP plan entries. ACP has no `cancelled`: such a step is `completed`, marked in `_meta`. */
export const planEntries = (plan: PlanSnapshot): Array<acp.PlanEntry> =>
  plan.steps.map((step) => ({
    content: step.step,
    priority: step.priority ?? "medium",
    status: step.status === "inProgress" ? "in_progress" : step.status === "cancelled" ? "completed" : step.status,
    ...(step.status === "cancelled" ? { _meta: { planbridge: { status: "cancelled" } } } : {})
  }))

/** A proposed plan: `plan_update` (markdown) for an editor that shows plans, else the text itself. */
export const proposedPlanUpdate = (planId: string, markdown: string, planUpdates: boolean): acp.SessionUpdate =>
  planUpdates
    ? { sessionUpdate: "plan_update", plan: { type: "markdown", planId, content: markdown } }
    : { sessionUpdate: "agent_message_chunk", content: text(markdown) }

type ItemEvent = RuntimeEventOf<"item.started"> | RuntimeEventOf<"item.updated"> | RuntimeEventOf<"item.completed">

const itemUpdates = (event: ItemEvent, context: UpdateContext): Array<acp.SessionUpdate> => {
  const { itemType, status, title, toolName } = event.payload
  const itemText = event.payload.text
  if (toolItemTypes.has(itemType)) {
    const fields = {
      toolCallId: event.itemId,
      title: title ?? toolName ?? itemType,
      kind: toolKinds[itemType] ?? "other",
      status: toolStatusOf(status),
      ...(event.payload.data === undefined ? {} : { rawInput: event.payload.data }),
      ...(itemText === undefined || itemText.length === 0
        ? {}
        : { content: [{ type: "content" as const, content: text(itemText) }] })
    }
    return [
      event.type === "item.started"
        ? { sessionUpdate: "tool_call", ...fields }
        : { sessionUpdate: "tool_call_update", ...fields }
    ]
  }
  if (event.type !== "item.completed" || itemText === undefined || itemText.length === 0) return []
  if (context.streamedItems.has(event.itemId)) return []
  switch (itemType) {
    case "assistant_message":
      return [{ sessionUpdate: "agent_message_chunk", content: text(itemText), messageId: event.itemId }]
    case "reasoning":
      return [{ sessionUpdate: "agent_thought_chunk", content: text(itemText), messageId: event.itemId }]
    case "user_message":
      return context.ownTurns.has(event.turnId)
        ? []
        : [{ sessionUpdate: "user_message_chunk", content: text(itemText), messageId: event.itemId }]
    default:
      return []
  }
}

/** The updates one live event gives (most give none: session and turn bookkeeping). */
export const updatesOf = (event: RuntimeEvent, context: UpdateContext): Array<acp.SessionUpdate> => {
  switch (event.type) {
    case "content.delta": {
      const { streamKind, delta } = event.payload
      if (streamKind !== "assistant_text" && streamKind !== "reasoning_text") return []
      context.streamedItems.add(event.itemId)
      return [
        {
          sessionUpdate: streamKind === "assistant_text" ? "agent_message_chunk" : "agent_thought_chunk",
          content: text(delta),
          messageId: event.itemId
        }
      ]
    }
    case "item.started":
    case "item.updated":
    case "item.completed":
      return itemUpdates(event, context)
    case "turn.plan.updated":
      return [{ sessionUpdate: "plan", entries: planEntries(event.payload.plan) }]
    case "plan.proposed.completed":
      return [proposedPlanUpdate(event.payload.planId, event.payload.markdown, context.planUpdates)]
    case "runtime.error":
      return [{ sessionUpdate: "agent_message_chunk", content: text(`\n[planbridge] ${event.payload.message}\n`) }]
    default:
      return []
  }
}

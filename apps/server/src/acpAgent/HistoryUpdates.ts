import type * as acp from "@agentclientprotocol/sdk/unstable"
import type { ItemView, ProposedPlanView, ThreadSnapshot } from "@planbridge/contracts"
import { planEntries, proposedPlanUpdate, toolStatusOf } from "./EventUpdates.ts"

/**
 * A thread's history, as `session/load` replays it: the items of its turns in the order they
 * started (the user's messages, the agent's text and thoughts, its tool calls), each proposed
 * plan where it was made, and the newest checklist at the end. Read from the snapshot (the
 * server's projection of the log), so it is the same after a restart of either side.
 */

const text = (value: string): acp.ContentBlock => ({ type: "text", text: value })

const itemUpdate = (item: ItemView): acp.SessionUpdate | undefined => {
  switch (item.itemType) {
    case "user_message":
      return { sessionUpdate: "user_message_chunk", content: text(item.text), messageId: item.itemId }
    case "assistant_message":
      return { sessionUpdate: "agent_message_chunk", content: text(item.text), messageId: item.itemId }
    case "reasoning":
      return { sessionUpdate: "agent_thought_chunk", content: text(item.text), messageId: item.itemId }
    case "tool_call":
    case "command":
    case "file_change":
    case "other":
      return {
        sessionUpdate: "tool_call",
        toolCallId: item.itemId,
        title: item.title ?? item.toolName ?? item.itemType,
        kind: item.itemType === "command" ? "execute" : item.itemType === "file_change" ? "edit" : "other",
        status: itemStatus(item.status),
        ...(item.text.length === 0 ? {} : { content: [{ type: "content", content: text(item.text) }] })
      }
    default:
      return undefined
  }
}

const itemStatus = (status: string): acp.ToolCallStatus =>
  status === "inProgress" || status === "completed" || status === "failed" || status === "declined"
    ? toolStatusOf(status)
    : "completed"

const planUpdate = (plan: ProposedPlanView, planUpdates: boolean): acp.SessionUpdate | undefined => {
  const markdown = plan.editedMarkdown ?? plan.markdown ?? plan.streamedText
  return markdown.length === 0 ? undefined : proposedPlanUpdate(plan.planId, markdown, planUpdates)
}

/** The updates that replay `snapshot`, oldest first. */
export const historyUpdates = (snapshot: ThreadSnapshot, planUpdates: boolean): Array<acp.SessionUpdate> => {
  const timed: Array<{ readonly at: string; readonly update: acp.SessionUpdate | undefined }> = [
    ...snapshot.items
      .filter((item) => item.itemType !== "user_message" || item.text.length > 0)
      .map((item) => ({ at: item.startedAt, update: itemUpdate(item) })),
    ...snapshot.proposedPlans.map((plan) => ({ at: plan.createdAt, update: planUpdate(plan, planUpdates) }))
  ]
  const updates = timed
    .sort((a, b) => a.at.localeCompare(b.at))
    .flatMap(({ update }) => (update === undefined ? [] : [update]))
  if (snapshot.latestPlan !== null)
    updates.push({ sessionUpdate: "plan", entries: planEntries(snapshot.latestPlan.plan) })
  return updates
}

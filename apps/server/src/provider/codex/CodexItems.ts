import type { ItemStatus, ItemType, StreamKind } from "@planbridge/contracts"
import {
  CommandExecutionItem,
  decodeWith,
  FileChangeItem,
  ItemHead,
  ReasoningItem,
  TextItem,
  ToolCallItem,
  UserMessageItem
} from "./CodexProtocol.ts"

/**
 * Native `ThreadItem` → canonical item fields. The item type decides the schema; an item of a
 * known type that does not match its schema is reported (never mapped from guesses), an item
 * of a type this adapter does not know becomes `other` with its native type as the title.
 */

export interface ItemFields {
  readonly itemId: string
  readonly itemType: ItemType
  readonly status: ItemStatus
  readonly title?: string
  readonly text?: string
  readonly toolName?: string
}

export type ItemDecode =
  | { readonly ok: true; readonly fields: ItemFields; readonly nativeType: string }
  | { readonly ok: false; readonly message: string }

const fail = (message: string): ItemDecode => ({ ok: false, message })

/** `phase` is `started` or `completed`; a completed tool item carries its final status. */
export const itemFields = (item: unknown, phase: "started" | "completed"): ItemDecode => {
  const head = decodeWith(ItemHead, item)
  if (!head.ok) return fail(`item: ${head.message}`)
  const { type, id } = head.value
  const textStatus: ItemStatus = phase === "started" ? "inProgress" : "completed"
  const ok = (fields: Omit<ItemFields, "itemId">): ItemDecode => ({
    ok: true,
    nativeType: type,
    fields: { itemId: id, ...fields }
  })
  const toolStatus = (status: ItemStatus): ItemStatus =>
    phase === "completed" && status === "inProgress" ? "completed" : status
  switch (type) {
    case "userMessage": {
      const r = decodeWith(UserMessageItem, item)
      if (!r.ok) return fail(`userMessage item: ${r.message}`)
      const text = r.value.content.flatMap((c) => (c.text !== undefined ? [c.text] : [])).join("\n")
      return ok({ itemType: "user_message", status: textStatus, text })
    }
    case "agentMessage":
    case "plan": {
      const r = decodeWith(TextItem, item)
      if (!r.ok) return fail(`${type} item: ${r.message}`)
      return ok({ itemType: type === "plan" ? "plan" : "assistant_message", status: textStatus, text: r.value.text })
    }
    case "reasoning": {
      const r = decodeWith(ReasoningItem, item)
      if (!r.ok) return fail(`reasoning item: ${r.message}`)
      return ok({
        itemType: "reasoning",
        status: textStatus,
        text: [...r.value.summary, ...r.value.content].join("\n")
      })
    }
    case "commandExecution": {
      const r = decodeWith(CommandExecutionItem, item)
      if (!r.ok) return fail(`commandExecution item: ${r.message}`)
      const output = r.value.aggregatedOutput
      return ok({
        itemType: "command",
        status: toolStatus(r.value.status),
        title: r.value.command,
        ...(output !== null ? { text: output } : {})
      })
    }
    case "fileChange": {
      const r = decodeWith(FileChangeItem, item)
      if (!r.ok) return fail(`fileChange item: ${r.message}`)
      return ok({ itemType: "file_change", status: toolStatus(r.value.status) })
    }
    case "mcpToolCall":
    case "dynamicToolCall": {
      const r = decodeWith(ToolCallItem, item)
      if (!r.ok) return fail(`${type} item: ${r.message}`)
      return ok({
        itemType: "tool_call",
        status: toolStatus(r.value.status),
        toolName: r.value.tool,
        title: r.value.tool
      })
    }
    default:
      return ok({ itemType: "other", status: textStatus, title: type })
  }
}

/** Which stream a delta notification feeds. */
export const deltaStreamKind: Readonly<Record<string, StreamKind>> = {
  "item/agentMessage/delta": "assistant_text",
  "item/plan/delta": "plan_text",
  "item/reasoning/summaryTextDelta": "reasoning_text",
  "item/reasoning/textDelta": "reasoning_text",
  "item/commandExecution/outputDelta": "tool_output",
  "item/fileChange/outputDelta": "tool_output"
}

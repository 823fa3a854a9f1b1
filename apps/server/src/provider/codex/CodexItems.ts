import type { ItemStatus, ItemType, StreamKind } from "@planbridge/contracts"
import { Result, Schema } from "effect"
import {
  CommandExecutionItem,
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

type Phase = "started" | "completed"
type Fields = Omit<ItemFields, "itemId">

/** A text item is in progress until completed; a completed tool item carries its final status. */
const textStatus = (phase: Phase): ItemStatus => (phase === "started" ? "inProgress" : "completed")
const toolStatus = (phase: Phase, status: ItemStatus): ItemStatus =>
  phase === "completed" && status === "inProgress" ? "completed" : status

/** One known item type: its schema and its canonical fields. */
const known = <S extends Schema.Decoder<unknown>>(schema: S, fields: (item: S["Type"], phase: Phase) => Fields) => {
  const decode = Schema.decodeUnknownResult(schema)
  return (item: unknown, phase: Phase) => Result.map(decode(item), (value) => fields(value, phase))
}

const KNOWN: Readonly<Record<string, (item: unknown, phase: Phase) => Result.Result<Fields, Schema.SchemaError>>> = {
  userMessage: known(UserMessageItem, (item, phase) => ({
    itemType: "user_message",
    status: textStatus(phase),
    text: item.content.flatMap((c) => (c.text !== undefined ? [c.text] : [])).join("\n")
  })),
  agentMessage: known(TextItem, (item, phase) => ({
    itemType: "assistant_message",
    status: textStatus(phase),
    text: item.text
  })),
  plan: known(TextItem, (item, phase) => ({ itemType: "plan", status: textStatus(phase), text: item.text })),
  reasoning: known(ReasoningItem, (item, phase) => ({
    itemType: "reasoning",
    status: textStatus(phase),
    text: [...item.summary, ...item.content].join("\n")
  })),
  commandExecution: known(CommandExecutionItem, (item, phase) => ({
    itemType: "command",
    status: toolStatus(phase, item.status),
    title: item.command,
    ...(item.aggregatedOutput !== null ? { text: item.aggregatedOutput } : {})
  })),
  fileChange: known(FileChangeItem, (item, phase) => ({
    itemType: "file_change",
    status: toolStatus(phase, item.status)
  })),
  mcpToolCall: known(ToolCallItem, toolCall),
  dynamicToolCall: known(ToolCallItem, toolCall)
}

function toolCall(item: typeof ToolCallItem.Type, phase: Phase): Fields {
  return { itemType: "tool_call", status: toolStatus(phase, item.status), toolName: item.tool, title: item.tool }
}

const decodeHead = Schema.decodeUnknownResult(ItemHead)

/** The item's canonical fields at `phase`, or why it cannot be read (a failure names its path). */
export const itemFields = (item: unknown, phase: Phase): Result.Result<ItemFields, string> => {
  const head = decodeHead(item)
  if (Result.isFailure(head)) return Result.fail(`item: ${head.failure.message}`)
  const { type, id } = head.success
  const fields = KNOWN[type]
  if (fields === undefined)
    return Result.succeed({ itemId: id, itemType: "other", status: textStatus(phase), title: type })
  const decoded = fields(item, phase)
  return Result.isSuccess(decoded)
    ? Result.succeed({ itemId: id, ...decoded.success })
    : Result.fail(`${type} item: ${decoded.failure.message}`)
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

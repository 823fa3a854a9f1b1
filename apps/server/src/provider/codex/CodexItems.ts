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
import { definedFields } from "../../util/definedFields.ts"

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

/** A text item: its canonical type and text; in progress until completed. */
const textItem = <S extends Schema.Decoder<unknown>>(
  schema: S,
  itemType: ItemType,
  text: (item: S["Type"]) => string
) => known(schema, (item, phase) => ({ itemType, status: textStatus(phase), text: text(item) }))

/** A tool item: its canonical type and what else it says; its own status, final once completed. */
const toolItem = <S extends Schema.Decoder<{ readonly status: ItemStatus }>>(
  schema: S,
  itemType: ItemType,
  more: (item: S["Type"]) => Omit<Fields, "itemType" | "status"> = () => ({})
) => known(schema, (item, phase) => ({ itemType, status: toolStatus(phase, item.status), ...more(item) }))

const toolCall = toolItem(ToolCallItem, "tool_call", (item) => ({ toolName: item.tool, title: item.tool }))

const KNOWN: Readonly<Record<string, (item: unknown, phase: Phase) => Result.Result<Fields, Schema.SchemaError>>> = {
  userMessage: textItem(UserMessageItem, "user_message", (item) =>
    item.content.flatMap((c) => (c.text !== undefined ? [c.text] : [])).join("\n")
  ),
  agentMessage: textItem(TextItem, "assistant_message", (item) => item.text),
  plan: textItem(TextItem, "plan", (item) => item.text),
  reasoning: textItem(ReasoningItem, "reasoning", (item) => [...item.summary, ...item.content].join("\n")),
  commandExecution: toolItem(CommandExecutionItem, "command", (item) => ({
    title: item.command,
    ...definedFields({ text: item.aggregatedOutput ?? undefined })
  })),
  fileChange: toolItem(FileChangeItem, "file_change"),
  mcpToolCall: toolCall,
  dynamicToolCall: toolCall
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

import { ItemId, type ItemStatus, type ItemType, type RawNative, type TurnId } from "@planbridge/contracts"
import { asJson, rawOf, type EventDraft } from "../kernel/EventDraft.ts"
import type * as N from "./AcpNative.ts"
import { definedFields } from "../../util/definedFields.ts"

type Drafts = ReadonlyArray<EventDraft>

export type StreamKind = "assistant_text" | "reasoning_text"

interface OpenText {
  readonly itemId: ItemId
  readonly streamKind: StreamKind
  readonly text: string
}

interface ToolState {
  readonly itemId: ItemId
  readonly turnId: TurnId
  readonly fields: N.ToolCallFields
  readonly completed: boolean
}

/**
 * The items a turn produces from `session/update`, immutable: assistant and reasoning text
 * (ACP sends bare chunks, so consecutive chunks of one kind form one item, closed by the next
 * item or the end of the turn) and tool calls (an update carries only the fields that changed).
 * The mapping decodes and decides whether a turn is open; this only keeps the items' state.
 */
export interface TurnItems {
  readonly open: OpenText | undefined
  readonly textSeq: number
  /** The current turn's tool calls by id (a new turn starts without them). */
  readonly tools: ReadonlyMap<string, ToolState>
}

type Next = { readonly items: TurnItems; readonly drafts: Drafts }

export const noItems: TurnItems = { open: undefined, textSeq: 0, tools: new Map() }

const itemTypes: Readonly<Record<string, ItemType>> = {
  execute: "command",
  edit: "file_change",
  delete: "file_change",
  move: "file_change"
}
/** An ACP tool kind as an item type: commands and file changes; anything else is a tool call. */
const itemTypeOfKind = (kind: string | null | undefined): ItemType =>
  (typeof kind === "string" && Object.hasOwn(itemTypes, kind) ? itemTypes[kind] : undefined) ?? "tool_call"

const itemStatusOf = (status: string | null | undefined): ItemStatus =>
  status === "completed" || status === "failed" ? status : "inProgress"

/** Later fields win; absent or null fields in an update keep the earlier value. */
const mergeToolCall = (base: N.ToolCallFields | undefined, update: N.ToolCallFields): N.ToolCallFields =>
  base === undefined
    ? update
    : {
        ...base,
        ...Object.fromEntries(Object.entries(update).filter(([, value]) => value !== undefined && value !== null))
      }

/** A new turn starts without open text or tool calls; what an unfinished turn left open is dropped. */
export const itemsOfNewTurn = (items: TurnItems): TurnItems => ({ ...items, open: undefined, tools: new Map() })

const itemTypeOfStream = (kind: StreamKind): "assistant_message" | "reasoning" =>
  kind === "assistant_text" ? "assistant_message" : "reasoning"

/** Completes the open text item, if a turn is open and has one. */
export const closeText = (items: TurnItems, turnId: TurnId | undefined): Next => {
  const open = items.open
  if (turnId === undefined || open === undefined) return { items, drafts: [] }
  const payload = { itemType: itemTypeOfStream(open.streamKind), status: "completed" as const, text: open.text }
  const raw = rawOf("planbridge", "text.closed", null)
  return {
    items: { ...items, open: undefined },
    drafts: [{ type: "item.completed", turnId, itemId: open.itemId, raw, payload }]
  }
}

export const textChunk = (
  items: TurnItems,
  turnId: TurnId,
  streamKind: StreamKind,
  text: string,
  raw: RawNative
): Next => {
  if (text.length === 0) return { items, drafts: [] }
  const drafts: Array<EventDraft> = []
  let next = items
  if (next.open === undefined || next.open.streamKind !== streamKind) {
    const closed = closeText(next, turnId)
    drafts.push(...closed.drafts)
    const textSeq = closed.items.textSeq + 1
    const itemId = ItemId.make(`${turnId}:${streamKind === "assistant_text" ? "text" : "reasoning"}:${textSeq}`)
    next = { ...closed.items, textSeq, open: { itemId, streamKind, text: "" } }
    const payload = { itemType: itemTypeOfStream(streamKind), status: "inProgress" as const }
    drafts.push({ type: "item.started", turnId, itemId, raw, payload })
  }
  const open = { ...next.open!, text: next.open!.text + text }
  drafts.push({ type: "content.delta", turnId, itemId: open.itemId, raw, payload: { streamKind, delta: text } })
  return { items: { ...next, open }, drafts }
}

export const toolCallItem = (items: TurnItems, turnId: TurnId, update: N.ToolCallFields, raw: RawNative): Next => {
  const closed = closeText(items, turnId)
  // Mock models and some agents reuse tool-call ids across turns: a new turn, a new item.
  const previous = closed.items.tools.get(update.toolCallId)
  const known = previous?.turnId === turnId ? previous : undefined
  const fields = mergeToolCall(known?.fields, update)
  const status = itemStatusOf(fields.status)
  const payload = {
    itemType: itemTypeOfKind(fields.kind),
    status,
    ...definedFields({ title: fields.title ?? undefined }),
    toolName: fields.kind ?? "other",
    data: asJson({
      toolCallId: fields.toolCallId,
      ...definedFields({ rawInput: fields.rawInput, rawOutput: fields.rawOutput, content: fields.content ?? undefined })
    })
  }
  const itemId = known?.itemId ?? ItemId.make(`${turnId}:tool:${update.toolCallId}`)
  const completed = known?.completed === true || status !== "inProgress"
  const tools = new Map(closed.items.tools).set(update.toolCallId, { itemId, turnId, fields, completed })
  const drafts: Array<EventDraft> = [...closed.drafts]
  if (known === undefined) {
    drafts.push({ type: "item.started", turnId, itemId, raw, payload })
    if (completed) drafts.push({ type: "item.completed", turnId, itemId, raw, payload })
  } else {
    // Once completed, later updates only update it.
    const type = !known.completed && completed ? "item.completed" : "item.updated"
    drafts.push({ type, turnId, itemId, raw, payload })
  }
  return { items: { ...closed.items, tools }, drafts }
}

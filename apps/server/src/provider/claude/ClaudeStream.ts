import type { ItemId, ItemType, RawNative, TurnId } from "@planbridge/contracts"
import { turnOf, type ClaudeMappingState, type Mapped } from "./ClaudeMappingState.ts"
import type { ContentBlock, StreamEvent } from "./ClaudeNative.ts"
import type { EventDraft } from "../kernel/EventDraft.ts"
import { withEntry } from "../kernel/immutable.ts"
import { mapped } from "../kernel/Mapped.ts"

/**
 * Assistant text and thinking, streamed and finished. The stream announces a block and its
 * deltas under `message_start`'s id and the block index; the SDK then sends one assistant
 * message per finished block, which does not carry the index. Both must land on the same
 * item (`<messageId>:<index>`), so the state remembers which index the stream last opened and
 * how many blocks of each message have finished. Tool blocks are the mapping's; only their
 * position is counted here.
 */

/** A stream event's drafts; the event's turn is taken once it belongs to a known block. */
export const streamEvent = (
  s: ClaudeMappingState,
  event: (typeof StreamEvent.Type)["event"],
  raw: RawNative
): Mapped => {
  const stream = s.stream
  if (event.type === "message_start" && event.message !== undefined)
    return mapped({ ...s, stream: { ...stream, messageId: event.message.id } })
  const messageId = stream.messageId
  if (messageId === undefined || event.index === undefined) return mapped(s)
  const { state, turnId } = turnOf(s)
  const itemId = `${messageId}:${event.index}` as ItemId
  if (event.type === "content_block_start" && event.content_block !== undefined) {
    const next = { ...state, stream: { ...stream, blockIndex: withEntry(stream.blockIndex, messageId, event.index) } }
    const itemType: ItemType | undefined =
      event.content_block.type === "text"
        ? "assistant_message"
        : event.content_block.type === "thinking"
          ? "reasoning"
          : undefined
    if (itemType === undefined) return mapped(next)
    return mapped(next, { type: "item.started", turnId, itemId, raw, payload: { itemType, status: "inProgress" } })
  }
  if (event.type !== "content_block_delta" || event.delta === undefined) return mapped(state)
  const { delta } = event
  if (delta.type === "text_delta" && delta.text !== undefined && delta.text.length > 0)
    return mapped(state, deltaDraft(turnId, itemId, raw, "assistant_text", delta.text))
  if (delta.type === "thinking_delta" && delta.thinking !== undefined && delta.thinking.length > 0)
    return mapped(state, deltaDraft(turnId, itemId, raw, "reasoning_text", delta.thinking))
  return mapped(state)
}

const deltaDraft = (
  turnId: TurnId,
  itemId: ItemId,
  raw: RawNative,
  streamKind: "assistant_text" | "reasoning_text",
  delta: string
): EventDraft => ({ type: "content.delta", turnId, itemId, raw, payload: { streamKind, delta } })

/** The item id of the next finished block of an assistant message (every block counts, tools too). */
export const finishedBlockId = (
  s: ClaudeMappingState,
  messageId: string,
  blockCount: number
): { readonly state: ClaudeMappingState; readonly itemId: ItemId } => {
  const stream = s.stream
  const seen = stream.blocksSeen.get(messageId) ?? 0
  const index = blockCount === 1 ? (stream.blockIndex.get(messageId) ?? seen) : seen
  const state = { ...s, stream: { ...stream, blocksSeen: withEntry(stream.blocksSeen, messageId, seen + 1) } }
  return { state, itemId: `${messageId}:${index}` as ItemId }
}

/** The completed item of a finished text or thinking block; undefined for any other block. */
export const finishedTextItem = (
  turnId: TurnId,
  itemId: ItemId,
  block: ContentBlock,
  raw: RawNative
): EventDraft | undefined => {
  if (block.type !== "text" && block.type !== "thinking") return undefined
  const payload =
    block.type === "text"
      ? { itemType: "assistant_message" as const, status: "completed" as const, text: block.text ?? "" }
      : { itemType: "reasoning" as const, status: "completed" as const, text: block.thinking ?? "" }
  return { type: "item.completed", turnId, itemId, raw, payload }
}

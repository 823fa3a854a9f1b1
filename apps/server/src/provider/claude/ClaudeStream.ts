import type { ItemId, RawNative, TurnId } from "@planbridge/contracts"
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

/** The blocks that are text, by block type: the item each is, and the stream its deltas feed. */
const TEXT_BLOCKS = {
  text: { itemType: "assistant_message", streamKind: "assistant_text" },
  thinking: { itemType: "reasoning", streamKind: "reasoning_text" }
} as const
type TextBlock = keyof typeof TEXT_BLOCKS
const isTextBlock = (type: string | undefined): type is TextBlock => type === "text" || type === "thinking"

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
    const block = event.content_block.type
    if (!isTextBlock(block)) return mapped(next)
    const payload = { itemType: TEXT_BLOCKS[block].itemType, status: "inProgress" as const }
    return mapped(next, { type: "item.started", turnId, itemId, raw, payload })
  }
  if (event.type !== "content_block_delta" || event.delta === undefined) return mapped(state)
  const block =
    event.delta.type === "text_delta" ? "text" : event.delta.type === "thinking_delta" ? "thinking" : undefined
  const delta = block === undefined ? undefined : event.delta[block]
  if (block === undefined || delta === undefined || delta.length === 0) return mapped(state)
  const payload = { streamKind: TEXT_BLOCKS[block].streamKind, delta }
  return mapped(state, { type: "content.delta", turnId, itemId, raw, payload })
}

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
  const type = block.type
  if (!isTextBlock(type)) return undefined
  const payload = { itemType: TEXT_BLOCKS[type].itemType, status: "completed" as const, text: block[type] ?? "" }
  return { type: "item.completed", turnId, itemId, raw, payload }
}

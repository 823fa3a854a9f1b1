import type { ItemId, ItemType, RawNative, TurnId } from "@planbridge/contracts"
import type { ContentBlock, StreamEvent } from "./ClaudeNative.ts"
import type { EventDraft } from "./ClaudeRequests.ts"

/**
 * Assistant text and thinking, streamed and finished. The stream announces a block and its
 * deltas under `message_start`'s id and the block index; the SDK then sends one assistant
 * message per finished block, which does not carry the index. Both must land on the same
 * item (`<messageId>:<index>`), so this remembers which index the stream last opened and how
 * many blocks of each message have finished. Tool blocks are the mapper's; only their
 * position is counted here.
 */
export class ClaudeStreamItems {
  private messageId: string | undefined
  private readonly blockIndex = new Map<string, number>()
  private readonly blocksSeen = new Map<string, number>()

  /**
   * A stream event's drafts. `turnOf` is called once the event belongs to a known block, as
   * the mapper's turn bookkeeping expects, whether or not a draft follows.
   */
  event(event: (typeof StreamEvent.Type)["event"], turnOf: () => TurnId, raw: RawNative): ReadonlyArray<EventDraft> {
    if (event.type === "message_start" && event.message !== undefined) {
      this.messageId = event.message.id
      return []
    }
    const messageId = this.messageId
    if (messageId === undefined || event.index === undefined) return []
    const turnId = turnOf()
    const itemId = `${messageId}:${event.index}` as ItemId
    if (event.type === "content_block_start" && event.content_block !== undefined) {
      this.blockIndex.set(messageId, event.index)
      const itemType: ItemType | undefined =
        event.content_block.type === "text"
          ? "assistant_message"
          : event.content_block.type === "thinking"
            ? "reasoning"
            : undefined
      return itemType === undefined
        ? []
        : [{ type: "item.started", turnId, itemId, raw, payload: { itemType, status: "inProgress" } }]
    }
    if (event.type === "content_block_delta" && event.delta !== undefined) {
      const { delta } = event
      if (delta.type === "text_delta" && delta.text !== undefined && delta.text.length > 0) {
        return [
          { type: "content.delta", turnId, itemId, raw, payload: { streamKind: "assistant_text", delta: delta.text } }
        ]
      }
      if (delta.type === "thinking_delta" && delta.thinking !== undefined && delta.thinking.length > 0) {
        return [
          {
            type: "content.delta",
            turnId,
            itemId,
            raw,
            payload: { streamKind: "reasoning_text", delta: delta.thinking }
          }
        ]
      }
    }
    return []
  }

  /** The item id of the next finished block of an assistant message (every block counts, tools too). */
  finishedBlockId(messageId: string, blockCount: number): ItemId {
    const seen = this.blocksSeen.get(messageId) ?? 0
    this.blocksSeen.set(messageId, seen + 1)
    const index = blockCount === 1 ? (this.blockIndex.get(messageId) ?? seen) : seen
    return `${messageId}:${index}` as ItemId
  }
}

/** The completed item of a finished text or thinking block; undefined for any other block. */
export const finishedTextItem = (
  turnId: TurnId,
  itemId: ItemId,
  block: ContentBlock,
  raw: RawNative
): EventDraft | undefined => {
  switch (block.type) {
    case "text":
      return {
        type: "item.completed",
        turnId,
        itemId,
        raw,
        payload: { itemType: "assistant_message", status: "completed", text: block.text ?? "" }
      }
    case "thinking":
      return {
        type: "item.completed",
        turnId,
        itemId,
        raw,
        payload: { itemType: "reasoning", status: "completed", text: block.thinking ?? "" }
      }
    default:
      return undefined
  }
}

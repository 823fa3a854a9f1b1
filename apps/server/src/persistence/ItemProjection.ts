import type { RuntimeEventOf, StreamKind } from "@planbridge/contracts"
import { byThread } from "./ByThread.ts"
import { jsonColumn } from "./JsonColumn.ts"
import type { ProjectionStatements } from "./ProjectionStatements.ts"

/** An item row as the batch's events leave it (see the `item` statement). */
interface PendingItem {
  readonly threadId: string
  readonly itemId: string
  readonly turnId: string
  itemType: string
  status: string
  title: string | null
  toolName: string | null
  data: string | null
  /** Replacing text (with what streamed after it) when `replaceText`, else the batch's streamed text. */
  text: string
  /** The thread sequence of the batch's first delta (the chunk's key), when it streamed text. */
  chunkSeq: number | null
  readonly startedAt: string
  updatedAt: string
  completedAt: string | null
  hasItem: boolean
  replaceText: boolean
}

const itemTypeOfStream: Record<StreamKind, string> = {
  assistant_text: "assistant_message",
  reasoning_text: "reasoning",
  plan_text: "plan",
  tool_output: "tool_call"
}

/**
 * The item rows and their streamed text: a batch's item events and deltas folded, each item
 * written once by `flush`, its streamed text as one chunk. An item is keyed within its turn
 * (thread, turn, item): an id a later turn uses again names a new item, never the earlier
 * turn's (providers promise item ids unique only within a turn or a session; EVENTS.md, "Ids").
 */
export const makeItemProjection = (s: ProjectionStatements) => {
  /** By thread, then turn, then item id: nested maps, no composed key (ids may hold any character). */
  const pendingByTurn = byThread<Map<string, PendingItem>>()
  const pendingItem = (threadId: string, turnId: string, itemId: string): PendingItem | undefined =>
    pendingByTurn.get(threadId, turnId)?.get(itemId)
  const setPending = (item: PendingItem): void => {
    const ofTurn = pendingByTurn.get(item.threadId, item.turnId)
    if (ofTurn === undefined) pendingByTurn.set(item.threadId, item.turnId, new Map([[item.itemId, item]]))
    else ofTurn.set(item.itemId, item)
  }

  /** A text on the event replaces the streamed buffer: on completion it is the authoritative text. */
  const itemEvent = (event: RuntimeEventOf<"item.started" | "item.updated" | "item.completed">): void => {
    const q = event.payload
    const at = event.createdAt
    const completedAt = event.type === "item.completed" ? at : null
    const item = pendingItem(event.threadId, event.turnId, event.itemId)
    if (item === undefined) {
      setPending({
        threadId: event.threadId,
        itemId: event.itemId,
        turnId: event.turnId,
        itemType: q.itemType,
        status: q.status,
        title: q.title ?? null,
        toolName: q.toolName ?? null,
        data: jsonColumn(q.data),
        text: q.text ?? "",
        chunkSeq: null,
        startedAt: at,
        updatedAt: at,
        completedAt,
        hasItem: true,
        replaceText: q.text !== undefined
      })
      return
    }
    item.itemType = q.itemType
    item.status = q.status
    item.title = q.title ?? null
    item.toolName = q.toolName ?? null
    item.data = jsonColumn(q.data)
    if (q.text !== undefined) {
      item.text = q.text
      item.replaceText = true
    }
    item.updatedAt = at
    if (completedAt !== null) item.completedAt = completedAt
    item.hasItem = true
  }

  const delta = (event: RuntimeEventOf<"content.delta">, threadSeq: number): void => {
    const threadId = event.threadId
    const at = event.createdAt
    const item = pendingItem(threadId, event.turnId, event.itemId)
    if (item === undefined) {
      // A delta may arrive for an item never announced; the item is created rather than the text lost.
      const itemType = itemTypeOfStream[event.payload.streamKind]
      setPending({
        threadId,
        itemId: event.itemId,
        turnId: event.turnId,
        itemType,
        status: "inProgress",
        title: null,
        toolName: null,
        data: null,
        text: event.payload.delta,
        chunkSeq: threadSeq,
        startedAt: at,
        updatedAt: at,
        completedAt: null,
        hasItem: false,
        replaceText: false
      })
    } else {
      if (item.chunkSeq === null && !item.replaceText) item.chunkSeq = threadSeq
      item.text += event.payload.delta
      item.updatedAt = at
    }
  }

  const flush = (): void => {
    for (const ofTurn of pendingByTurn.values())
      for (const item of ofTurn.values()) {
        const flags = { hasItem: item.hasItem ? 1 : 0, replaceText: item.replaceText ? 1 : 0 }
        if (item.replaceText) {
          s.item.run({ ...item, ...flags })
          s.itemChunksCleared.run({ threadId: item.threadId, turnId: item.turnId, itemId: item.itemId })
          continue
        }
        // Streamed text is appended as a chunk of its own: the row's text is not rewritten.
        s.item.run({ ...item, ...flags, text: "" })
        if (item.text.length > 0) s.itemChunk.run({ ...item, firstSeq: item.chunkSeq })
      }
  }

  const clear = (): void => pendingByTurn.clear()

  return { itemEvent, delta, flush, clear }
}

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
  /**
   * Replacing text (with what streamed after it, up to `CHUNK_CHARS`) when `replaceText`, else
   * the batch's streamed text (from the last of `closed`, if any).
   */
  text: string
  /** The thread sequence of the batch's first delta (the chunk's key), when it streamed text. */
  chunkSeq: number | null
  /** Streamed text of the batch that came before `text`, as chunks of at most about `CHUNK_CHARS`. */
  closed: Array<{ readonly firstSeq: number; readonly text: string }>
  readonly startedAt: string
  updatedAt: string
  completedAt: string | null
  hasItem: boolean
  replaceText: boolean
}

/**
 * The streamed text one chunk row takes from a batch (UTF-16 units) before the next delta opens
 * another. A batch may carry a whole split event (EventSize.ts: a 20 MiB text is ~107 deltas);
 * folded into one row, its text was one 20 MiB value bound, quoted and copied several times over
 * by SQLite in one statement (issue 31, item 5). Readers concatenate chunks in order, so how the
 * text is cut changes nothing they see.
 */
export const CHUNK_CHARS = 1024 * 1024

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
        closed: [],
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
      item.closed = []
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
        closed: [],
        startedAt: at,
        updatedAt: at,
        completedAt: null,
        hasItem: false,
        replaceText: false
      })
    } else {
      const delta = event.payload.delta
      if (item.text.length > 0 && item.text.length + delta.length > CHUNK_CHARS) {
        // The text so far is written as it is (the row's replacing text, or a chunk); this delta opens the next chunk.
        if (item.replaceText && item.closed.length === 0) item.closed.push({ firstSeq: -1, text: item.text })
        else item.closed.push({ firstSeq: item.chunkSeq ?? threadSeq, text: item.text })
        item.text = delta
        item.chunkSeq = threadSeq
      } else {
        if (item.chunkSeq === null && !item.replaceText) item.chunkSeq = threadSeq
        item.text += delta
      }
      item.updatedAt = at
    }
  }

  const flush = (): void => {
    for (const ofTurn of pendingByTurn.values())
      for (const item of ofTurn.values()) {
        const flags = { hasItem: item.hasItem ? 1 : 0, replaceText: item.replaceText ? 1 : 0 }
        const key = { threadId: item.threadId, turnId: item.turnId, itemId: item.itemId }
        // With a replacing text, the first closed piece (key -1) is that text: the row's.
        const [head, ...rest] = item.closed
        const replacing = item.replaceText ? (head === undefined ? item.text : head.text) : undefined
        if (replacing !== undefined) {
          s.item.run({ ...item, ...flags, text: replacing })
          s.itemChunksCleared.run(key)
        } else {
          // Streamed text is appended as chunks of its own: the row's text is not rewritten.
          s.item.run({ ...item, ...flags, text: "" })
        }
        const chunks = item.replaceText ? rest : item.closed
        for (const chunk of chunks) s.itemChunk.run({ ...key, firstSeq: chunk.firstSeq, text: chunk.text })
        if (item.replaceText && head === undefined) continue
        if (item.text.length > 0) s.itemChunk.run({ ...key, firstSeq: item.chunkSeq, text: item.text })
      }
  }

  const clear = (): void => pendingByTurn.clear()

  return { itemEvent, delta, flush, clear }
}

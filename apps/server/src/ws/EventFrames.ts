import type { ServerFrame, ThreadId } from "@planbridge/contracts"
import { eventJsonParts } from "../persistence/EventJson.ts"
import type { StoredEvent } from "../persistence/EventStore.ts"

/**
 * Live events of one thread as they go on the wire: committed events with consecutive
 * per-thread sequences, in order, and the bytes of their WebSocket text frames (each a whole
 * frame, header and `event` frame JSON), made once for every follower of the thread.
 *
 * Why bytes on the wire and not `ws.send(text)` per follower (issue 31, item 5): one hot thread
 * with 200 followers sent every event 200 times through `ws`, which measures and encodes the
 * text to UTF-8 for each socket and writes a header and the payload apart: per delivery the cost
 * of one event, per thread commit the cost of `events × followers`. With the frames made once,
 * a follower costs one socket write per commit, whatever the commit holds, and an event's bytes
 * exist once however many follow it (a 1 MiB event was encoded once per subscriber before).
 * Each frame is made when a follower first writes it, not the whole run at once: the pieces of a
 * 20 MiB line are a run of a hundred 1 MiB events, and a follower with room for one would
 * otherwise have had all of them made (their texts, then the frames, then the run joined).
 */
export interface LiveRun {
  readonly threadId: ThreadId
  /** Never empty; `events[i + 1].threadSeq === events[i].threadSeq + 1`. */
  readonly events: ReadonlyArray<StoredEvent>
  /**
   * The whole WebSocket frame (header and `event` frame JSON) of `events[i]`, made on the first
   * call and shared by every follower after it: only the frames some follower writes are made
   * (a follower with room for one of a hundred 1 MiB events costs one frame, not a hundred).
   */
  readonly frame: (i: number) => Buffer
  /**
   * All the run's frames in one buffer, made on the first call and shared by every follower after
   * it; undefined when they add up to more than `JOINED_RUN_BYTES` (only the frames up to that
   * are made). A follower that takes the whole run then costs one `write` of bytes made once, as
   * the bare broadcast's clients do, instead of a corked write per frame and a `writev`.
   */
  readonly joined: () => Buffer | undefined
}

/** Events are written to a socket only while it holds less than this unsent (see ThreadFeed). */
export const FLOW_HIGH_WATER_BYTES = 1024 * 1024

/**
 * The most bytes of frames a run is joined into one buffer for its followers: as much as a
 * follower may take at once (the congestion bound).
 * Why not less (it was 64 KiB; issue 31, item 5): a hot thread's held run grows with the time
 * between its fan-outs, and a server that falls behind (a GC, a busy core) fans out runs of
 * 100–150 events (85–125 KiB); past the bound each follower took them corked, a `write` per frame
 * into the socket's buffer, then one `writev`: measured 29–44 µs of CPU per follower for runs of
 * 80–150 small frames, against 17–24 µs for one `write` of the same bytes joined once for all
 * (200 followers: ~4 ms less per fan-out, when the server has the least to spare). The joined
 * copy is made once per run, not per follower, and only of small events: a run that reaches the
 * bound (a big line's 1 MiB pieces) is not joined, and its frames go out as before.
 */
export const JOINED_RUN_BYTES = FLOW_HIGH_WATER_BYTES

/** An `event` frame's JSON up to its event's (the frame closes with one brace after it). */
const eventFrameHead = (threadJson: string, seq: number): string =>
  `{"type":"event","threadId":${threadJson},"seq":${seq},"event":`

/** An `event` frame around an event's stored JSON (never parsed here): the backlog's and the live ones. */
export const eventFrameText = (threadJson: string, seq: number, eventJson: string): string =>
  `${eventFrameHead(threadJson, seq)}${eventJson}}`

/**
 * A live event's frame JSON in parts, written one after the other: around the JSON the log stored
 * (`eventJsonParts`), or serialized when the event came without it.
 */
const liveFrameParts = (stored: StoredEvent): ReadonlyArray<string> => {
  if (stored.json !== undefined) {
    const head = eventFrameHead(JSON.stringify(stored.event.threadId), stored.threadSeq)
    return [head, ...eventJsonParts(stored.json), "}"]
  }
  const frame: ServerFrame = {
    type: "event",
    threadId: stored.event.threadId,
    seq: stored.threadSeq,
    event: stored.event
  }
  return [JSON.stringify(frame)]
}

/**
 * The header of a final, unmasked text frame of `length` payload bytes (RFC 6455 5.2: FIN and
 * opcode 1; a server never masks; the server negotiates no extension, so no RSV bit).
 */
export const textFrameHeader = (length: number): Buffer => {
  if (length < 126) return Buffer.from([0x81, length])
  if (length < 65_536) return Buffer.from([0x81, 126, length >> 8, length & 0xff])
  const header = Buffer.alloc(10)
  header[0] = 0x81
  header[1] = 127
  header.writeBigUInt64BE(BigInt(length), 2)
  return header
}

/**
 * One allocation: the header, then the JSON encoded in place, part by part. The frame's text is
 * never made as one string: joined around the stored JSON it was a rope, and measuring it copied
 * all of it into a flat string first, a transient copy of every event's JSON (issue 31, item 5).
 */
const frameOf = (stored: StoredEvent): Buffer => {
  const parts = liveFrameParts(stored)
  let length = 0
  for (const part of parts) length += Buffer.byteLength(part, "utf8")
  const header = textFrameHeader(length)
  const frame = Buffer.allocUnsafe(header.length + length)
  let at = header.copy(frame, 0)
  for (const part of parts) at += frame.write(part, at, "utf8")
  return frame
}

/**
 * A batch of committed events (any threads, commit order) cut into runs: the longest stretches of
 * one thread's events with consecutive sequences, in the batch's order.
 */
export const liveRunsOf = (batch: Iterable<StoredEvent>): Array<LiveRun> => {
  const runs: Array<LiveRun> = []
  let current: Array<StoredEvent> = []
  const close = () => {
    if (current.length === 0) return
    const events = current
    const made: Array<Buffer | undefined> = []
    const frame = (i: number) => (made[i] ??= frameOf(events[i]!))
    let joined: Buffer | undefined | null = null
    const join = (): Buffer | undefined => {
      if (events.length === 1) return frame(0)
      let bytes = 0
      for (let i = 0; i < events.length; i++) {
        bytes += frame(i).length
        if (bytes > JOINED_RUN_BYTES) return undefined
      }
      return Buffer.concat(made as Array<Buffer>, bytes)
    }
    runs.push({
      threadId: events[0]!.event.threadId,
      events,
      frame,
      joined: () => (joined === null ? (joined = join()) : joined)
    })
    current = []
  }
  for (const stored of batch) {
    const last = current[current.length - 1]
    if (
      last !== undefined &&
      (last.event.threadId !== stored.event.threadId || last.threadSeq + 1 !== stored.threadSeq)
    )
      close()
    current.push(stored)
  }
  close()
  return runs
}

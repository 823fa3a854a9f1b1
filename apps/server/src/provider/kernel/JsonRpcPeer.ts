import { Deferred, Effect, Queue, type Scope } from "effect"
import { INBOUND_QUEUE_LINES, readLinesPaced, type FlowProbe } from "../inbound.ts"
import { MAX_LINE_BYTES, type ProviderLine } from "../lines.ts"
import { groupCommitTake } from "./groupCommit.ts"
import { jsonRpcIdKey, type JsonRpcId } from "./jsonRpcId.ts"
import { acquireProviderProcess } from "./ProviderProcess.ts"
import type { TranscriptEntry } from "./transcript.ts"
import { definedFields } from "../../util/definedFields.ts"
import { adapterError, type AdapterError } from "../AdapterError.ts"

/** A response to one of our requests, as the dialect reads it. */
export type JsonRpcResponse = { readonly id: JsonRpcId } & (
  { readonly result: unknown } | { readonly error: { readonly code: number; readonly message: string } }
)

/**
 * What differs between the JSON-RPC dialects spoken over stdio (Codex app-server, ACP). One
 * dialect object serves every session of its provider, so it holds no per-process state.
 */
export interface JsonRpcDialect<Line extends TranscriptEntry> {
  /** A stdout line within the bound → its line (`in`, or `local` when it is no message); undefined: skip it. */
  readonly read: (line: ProviderLine, outstanding: (id: JsonRpcId) => boolean) => Line | undefined
  /** A line over `MAX_LINE_BYTES`, at its place (the group is being killed: it may have been a request). */
  readonly tooLong: (line: ProviderLine) => Line
  /** The last line: the exit, `expected` when we ended the process. */
  readonly exit: (exit: {
    readonly code: number | null
    readonly signal: string | null
    readonly expected: boolean
    readonly stderr: string
  }) => Line
  /** An `in` message as a response to one of our requests, if it is one (`line`: as `read` decoded it). */
  readonly responseOf: (msg: unknown, line: Line) => JsonRpcResponse | undefined
  /** Our request as written (Codex sends no `"jsonrpc"` field, ACP does). */
  readonly request: (id: number, method: string, params: unknown) => { readonly id: number; readonly method: string }
}

export interface JsonRpcPeerOptions<Line extends TranscriptEntry> {
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string | undefined>>
  readonly cwd: string
  readonly dialect: JsonRpcDialect<Line>
  /** Without it, requests wait as long as the process lives. */
  readonly requestTimeoutMs?: number
  readonly stderrLimitBytes?: number
  /** Sees every line as it is read and every message as it is written (recorders). */
  readonly onTraffic?: (entry: TranscriptEntry) => void
  /** Counters of the bounded inbound queue, for tests. */
  readonly probe?: FlowProbe
}

export interface PreparedRequest {
  readonly msg: { readonly id: number; readonly method: string }
  /** The result, or the JSON-RPC error / timeout / exit as an AdapterError. */
  readonly response: Effect.Effect<unknown, AdapterError>
  /** Forgets the request when it is not sent after all. */
  readonly release: () => void
}

export interface JsonRpcPeer<Line extends TranscriptEntry> {
  readonly pid: number
  /** The next line, in order; taking it frees its place in the bounded queue of lines read ahead. */
  readonly take: Effect.Effect<Line>
  /**
   * Every line waiting (at least one: waits for it), in order, each with the function that frees
   * its place in the bounded queue: a session records a burst at once and frees them after.
   */
  readonly takeAvailable: Effect.Effect<ReadonlyArray<{ readonly line: Line; readonly release: () => void }>>
  /**
   * After the session mapped a line: a response completes its request, so its caller finds what
   * the response set up (a thread, a session, a mode) in the session's state.
   */
  readonly mapped: (line: Line) => void
  /** Registers a request id before anything is written, so that no response can outrun it. */
  readonly prepareRequest: (method: string, params: unknown) => PreparedRequest
  /** Writes a request outside any mapping (probes) and waits for its response. */
  readonly request: (method: string, params: unknown) => Effect.Effect<unknown, AdapterError>
  /**
   * Writes a message after every message written before it, without waiting for the pipe: a
   * provider that stops reading its stdin while its own writes wait on our bounded reading must
   * not hold up the session in return. After the exit it fails (`provider_exited`).
   */
  readonly write: (msg: unknown) => Effect.Effect<void, AdapterError>
  readonly stderr: () => string
  readonly isAlive: () => boolean
  /** Signals the process group; the exit still arrives through `take`. */
  readonly kill: (signal: NodeJS.Signals, expected: boolean) => void
  /** Ends stdin, SIGTERMs the group, SIGKILLs it after a grace period (kernel `ProviderProcess`). */
  readonly shutdown: Effect.Effect<void>
  readonly exited: Effect.Effect<Line>
}

const exitedError = (message = "the provider process has exited") => adapterError("provider_exited", message)

/**
 * Newline-delimited JSON-RPC over a provider child's stdio, the one peer of the Codex and ACP
 * adapters. The child runs in its own process group under a parent-death signal, recorded in
 * `ProcessGroups`, owned by the Scope it was started in (kernel `ProviderProcess`). Everything
 * the child writes reaches `take` in order — messages, lines that are none (never a crash), and
 * last its exit, once stdout is drained — at most `INBOUND_QUEUE_LINES` ahead of the session:
 * beyond that stdout is not read, so a flood waits in the child (inbound.ts). A line over
 * `MAX_LINE_BYTES` cannot be read; it may have been a request or the response a turn waits for,
 * so the group is killed and the exit ends the session. Our request ids are our own.
 */
export const makeJsonRpcPeer = <Line extends TranscriptEntry>(
  options: JsonRpcPeerOptions<Line>
): Effect.Effect<JsonRpcPeer<Line>, AdapterError, Scope.Scope> =>
  Effect.gen(function* () {
    const { dialect } = options
    const incoming = yield* Queue.unbounded<{ readonly line: Line; readonly release: () => void }>()
    const exitDeferred = yield* Deferred.make<Line>()
    const stderrLimit = options.stderrLimitBytes ?? 64 * 1024
    /** Requests written and not yet answered. */
    const outstanding = new Set<string>()
    const waiting = new Map<
      string,
      { readonly method: string; readonly done: Deferred.Deferred<unknown, AdapterError> }
    >()
    let spawnError = ""
    let nextId = 1
    let alive = true
    let expectedExit = false

    const spawned = yield* acquireProviderProcess({ ...options, stderrLimit })
    const { child, pid } = spawned
    // Before the group's end: an exit from here on is one we asked for.
    yield* Effect.addFinalizer(() => Effect.sync(() => (expectedExit ||= alive)))
    const stderr = () => (spawned.stderrTail() + spawnError).slice(-stderrLimit)
    const offer = (line: Line, release: () => void = () => undefined) => {
      options.onTraffic?.(line)
      Queue.offerUnsafe(incoming, { line, release })
    }
    const answer = (response: JsonRpcResponse) => {
      const waiter = waiting.get(jsonRpcIdKey(response.id))
      if (waiter === undefined) return
      waiting.delete(jsonRpcIdKey(response.id))
      if ("result" in response) return Deferred.doneUnsafe(waiter.done, Effect.succeed(response.result))
      const { code, message } = response.error
      const failure = adapterError("protocol", `JSON-RPC error ${code}: ${message}`, { cause: response.error })
      Deferred.doneUnsafe(waiter.done, Effect.fail(failure))
    }
    const readLine = (data: ProviderLine, release: () => void) => {
      const line = dialect.read(data, (id) => outstanding.delete(jsonRpcIdKey(id)))
      if (line === undefined) return release()
      offer(line, release)
    }

    let exitInfo: { readonly code: number | null; readonly signal: string | null } | undefined
    let stdoutClosed = false
    const finish = () => {
      if (exitInfo === undefined || !stdoutClosed || !alive) return
      alive = false
      for (const { done } of waiting.values()) Deferred.doneUnsafe(done, Effect.fail(exitedError()))
      waiting.clear()
      const line = dialect.exit({ ...exitInfo, expected: expectedExit || spawned.closing(), stderr: stderr() })
      Deferred.doneUnsafe(exitDeferred, Effect.succeed(line))
      offer(line)
    }
    // The reader makes this process's own line splitter (the 32 MiB bound, a 4 KiB head of a
    // longer line). A dialect is one object shared by every session of its provider, so it holds
    // no reading state: a splitter kept there was shared too, and the line abandoned over the
    // bound in one session swallowed the next session's first line (issue 31, item 4).
    readLinesPaced({
      stream: child.stdout,
      ...definedFields({ probe: options.probe }),
      // Not expected: the exit that follows is the session's end, caused by this line.
      onTooLong: () => spawned.signalGroup("SIGKILL"),
      onLine: (line, release) =>
        line.bytes > MAX_LINE_BYTES ? offer(dialect.tooLong(line), release) : readLine(line, release),
      onEnd: () => {
        stdoutClosed = true
        finish()
      }
    })
    child.on("exit", (code, signal) => {
      exitInfo = { code, signal }
      finish()
    })
    child.on("error", (error) => {
      spawnError = `\n[spawn error] ${error.message}`
      if (exitInfo !== undefined) return
      exitInfo = { code: null, signal: null }
      stdoutClosed = true
      finish()
    })

    const write = (msg: unknown): Effect.Effect<void, AdapterError> =>
      Effect.suspend(() => {
        if (!alive || child.stdin.destroyed) return Effect.fail(exitedError())
        options.onTraffic?.({ dir: "out", msg })
        // A write that fails later is a dead process, which its exit reports.
        child.stdin.write(`${JSON.stringify(msg)}\n`, () => undefined)
        return Effect.void
      })

    const prepareRequest = (method: string, params: unknown): PreparedRequest => {
      const id = nextId++
      const key = jsonRpcIdKey(id)
      const done = Deferred.makeUnsafe<unknown, AdapterError>()
      if (!alive) Deferred.doneUnsafe(done, Effect.fail(exitedError()))
      else {
        outstanding.add(key)
        waiting.set(key, { method, done })
      }
      const timeoutMs = options.requestTimeoutMs
      const response =
        timeoutMs === undefined
          ? Deferred.await(done)
          : Deferred.await(done).pipe(
              Effect.timeoutOrElse({
                duration: timeoutMs,
                orElse: () => {
                  waiting.delete(key)
                  const message = `${method} got no response within ${timeoutMs} ms`
                  return Effect.fail(adapterError("timeout", message))
                }
              })
            )
      const release = () => {
        outstanding.delete(key)
        waiting.delete(key)
      }
      return { msg: dialect.request(id, method, params), response, release }
    }

    return {
      pid,
      take: Effect.map(Queue.take(incoming), ({ line, release }) => {
        release()
        return line
      }),
      // The exit line holds no place, hence one more than the bound.
      takeAvailable: Queue.takeBetween(incoming, 1, INBOUND_QUEUE_LINES + 1),
      mapped: (line) => {
        const response = line.dir === "in" ? dialect.responseOf(line.msg, line) : undefined
        if (response !== undefined) answer(response)
      },
      prepareRequest,
      request: (method, params) => {
        const request = prepareRequest(method, params)
        return Effect.andThen(write(request.msg), request.response).pipe(Effect.ensuring(Effect.sync(request.release)))
      },
      write,
      stderr,
      isAlive: () => alive,
      kill: (signal, expected) => {
        if (expected) expectedExit = true
        spawned.signalGroup(signal)
      },
      shutdown: spawned.shutdown,
      exited: Deferred.await(exitDeferred)
    } satisfies JsonRpcPeer<Line>
  })

/**
 * A session's single reader: the peer's lines mapped strictly in order, a burst (every line
 * waiting) at a time, so that its events are recorded together; each line keeps its place in the
 * bounded read-ahead until its burst is mapped, then is acknowledged to the peer (`mapped`),
 * until the last one (the exit). A burst that fails to map is the mapping's to report; the next
 * one is read regardless.
 */
export const mapPeerLines = <Line extends TranscriptEntry>(
  peer: JsonRpcPeer<Line>,
  map: (lines: ReadonlyArray<Line>) => Effect.Effect<unknown, unknown>,
  isLast: (line: Line) => boolean
): Effect.Effect<void> =>
  Effect.gen(function* () {
    // A hot session's lines wait a moment to share a transaction (groupCommit.ts).
    const takeBurst = groupCommitTake(peer.takeAvailable)
    while (true) {
      const taken = yield* takeBurst
      const lines = taken.map((t) => t.line)
      yield* Effect.ignore(map(lines))
      for (const { line, release } of taken) {
        release()
        peer.mapped(line)
      }
      if (lines.some(isLast)) return
    }
  })

import { Deferred, Effect, Queue, Schema, Scope } from "effect"
import { readLinesPaced, type FlowProbe } from "../inbound.ts"
import { LINE_HEAD_BYTES, MAX_LINE_BYTES, utf8Head, type ProviderLine } from "../lines.ts"
import { jsonRpcIdKey } from "../kernel/jsonRpcId.ts"
import { acquireProviderProcess } from "../kernel/ProviderProcess.ts"
import type { JsonRpcId } from "./CodexProtocol.ts"
import { classify, type ExitInput, type MappingInput } from "./CodexMapping.ts"
import type { TranscriptEntry } from "../kernel/transcript.ts"
import { definedFields } from "../../util/definedFields.ts"

/**
 * Newline-delimited JSON-RPC over a child's stdio (the `codex app-server` dialect: no
 * `"jsonrpc"` field). The child runs detached in its own process group, under a parent-death
 * signal, recorded in `ProcessGroups`, owned by the Scope it was started in: closing the Scope
 * kills the whole group. Everything the child writes reaches `take` in order — messages,
 * unreadable lines (never a crash), and finally its exit — while responses also complete the
 * request that asked. At most `INBOUND_QUEUE_LINES` lines wait to be taken: beyond that the
 * child's stdout is not read until the session takes some (inbound.ts), so a flood waits in the
 * child instead of in this process. Stderr is kept, bounded. A line over `MAX_LINE_BYTES` cannot be read: it
 * may have been a request or the response a turn waits for, so skipping it could stall the
 * session for ever. It is reported (`too_long`, its head) and the group killed; the exit ends
 * the session.
 */

export class TransportError extends Schema.TaggedError<TransportError>()("TransportError", {
  reason: Schema.Literals(["provider_exited", "timeout", "protocol", "start_failed"]),
  message: Schema.String
}) {}

/** What crosses the wire, in both directions, for recorders: transcript lines without their time. */
export type TrafficEntry = TranscriptEntry

export interface TransportOptions {
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string>>
  readonly cwd: string
  readonly requestTimeoutMs?: number
  readonly stderrLimitBytes?: number
  readonly onTraffic?: (entry: TrafficEntry) => void
  /** Counters of the bounded inbound queue, for tests. */
  readonly probe?: FlowProbe
}

export interface PreparedRequest {
  readonly id: JsonRpcId
  readonly msg: { readonly id: JsonRpcId; readonly method: string; readonly params: unknown }
  /** The result, or the JSON-RPC error / timeout / exit as a TransportError. */
  readonly response: Effect.Effect<unknown, TransportError>
  /** Forgets the request when it is not sent after all. */
  readonly release: () => void
}

export interface JsonRpcTransport {
  readonly pid: number
  /**
   * The next input, in order. Taking it frees its place in the bounded queue of lines read
   * ahead of the session; the child's stdout is read only while that queue has room.
   */
  readonly take: Effect.Effect<MappingInput>
  /** Registers a request id before anything is written, so that no response can outrun it. */
  readonly prepareRequest: (method: string, params: unknown) => PreparedRequest
  readonly write: (msg: unknown) => Effect.Effect<void, TransportError>
  readonly stderr: () => string
  readonly isAlive: () => boolean
  /** Signals the process group; the exit still arrives through `incoming`. */
  readonly kill: (signal: NodeJS.Signals, expected: boolean) => void
  readonly exited: Effect.Effect<ExitInput>
}

export const startTransport = (
  options: TransportOptions
): Effect.Effect<JsonRpcTransport, TransportError, Scope.Scope> =>
  Effect.gen(function* () {
    // Bounded by the paced reader: at most INBOUND_QUEUE_LINES lines (and the exit) wait here.
    const incoming = yield* Queue.unbounded<{ readonly input: MappingInput; readonly release: () => void }>()
    const exitDeferred = yield* Deferred.make<ExitInput>()
    const timeoutMs = options.requestTimeoutMs ?? 30_000
    const stderrLimit = options.stderrLimitBytes ?? 64 * 1024
    const pending = new Map<string, Deferred.Deferred<unknown, TransportError>>()
    let spawnError = ""
    let nextId = 1
    let alive = true
    let expectedExit = false

    const spawned = yield* acquireProviderProcess({ ...options, stderrLimit }).pipe(
      Effect.mapError((error) => new TransportError({ reason: "start_failed", message: error.message }))
    )
    const { child, pid } = spawned
    // Before the group's end: an exit from here on is one we asked for.
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        if (alive) expectedExit = true
      })
    )
    const key = jsonRpcIdKey
    /** `release` frees the line's place in the inbound queue once the session takes it. */
    const offer = (input: MappingInput, release: () => void = () => undefined) => {
      options.onTraffic?.(input)
      Queue.offerUnsafe(incoming, { input, release })
    }

    const readLine = (line: string, release: () => void) => {
      if (line.trim().length === 0) return release()
      let msg: unknown
      try {
        msg = JSON.parse(line)
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error)
        return offer({ dir: "local", msg: { kind: "unreadable", line, reason } }, release)
      }
      const c = classify(msg)
      if (c.type === "response") {
        const waiter = pending.get(key(c.id))
        if (waiter !== undefined) {
          pending.delete(key(c.id))
          Deferred.doneUnsafe(
            waiter,
            c.error !== undefined
              ? Effect.fail(
                  new TransportError({
                    reason: "protocol",
                    message: `JSON-RPC error ${c.error.code}: ${c.error.message}`
                  })
                )
              : Effect.succeed(c.result)
          )
        }
      }
      offer({ dir: "in", msg }, release)
    }
    /** A line over the bound, at its place in order (the group was killed when it was found). */
    const tooLong = (line: ProviderLine, release: () => void) => {
      const head = utf8Head(line.data, LINE_HEAD_BYTES)
      offer({ dir: "local", msg: { kind: "tooLong", head, bytes: line.bytes } }, release)
    }

    // Report the exit only once stdout is drained, so no line is lost behind it.
    let exitInfo: { code: number | null; signal: string | null } | undefined
    let stdoutClosed = false
    const finish = () => {
      if (exitInfo === undefined || !stdoutClosed) return
      alive = false
      for (const waiter of pending.values()) {
        Deferred.doneUnsafe(
          waiter,
          Effect.fail(new TransportError({ reason: "provider_exited", message: "the provider process exited" }))
        )
      }
      pending.clear()
      const input: ExitInput = { dir: "local", msg: { kind: "exit", ...exitInfo, expected: expectedExit } }
      Deferred.doneUnsafe(exitDeferred, Effect.succeed(input))
      offer(input)
    }
    readLinesPaced({
      stream: child.stdout,
      ...definedFields({ probe: options.probe }),
      // Not expected: the exit that follows is the session's end, caused by this line.
      onTooLong: () => spawned.signalGroup("SIGKILL"),
      onLine: (line, release) =>
        line.bytes > MAX_LINE_BYTES ? tooLong(line, release) : readLine(line.data.toString("utf8"), release),
      // After every line: the exit is reported only once stdout is drained.
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
      if (exitInfo === undefined) {
        exitInfo = { code: null, signal: null }
        stdoutClosed = true
        finish()
      }
    })

    const write = (msg: unknown): Effect.Effect<void, TransportError> =>
      Effect.callback<void, TransportError>((resume) => {
        if (!alive || child.stdin.destroyed) {
          resume(
            Effect.fail(new TransportError({ reason: "provider_exited", message: "the provider process has exited" }))
          )
          return
        }
        options.onTraffic?.({ dir: "out", msg })
        child.stdin.write(`${JSON.stringify(msg)}\n`, (error) => {
          resume(
            error ? Effect.fail(new TransportError({ reason: "provider_exited", message: error.message })) : Effect.void
          )
        })
      })

    const prepareRequest = (method: string, params: unknown): PreparedRequest => {
      const id = nextId++
      const waiter = Deferred.makeUnsafe<unknown, TransportError>()
      if (!alive)
        Deferred.doneUnsafe(
          waiter,
          Effect.fail(new TransportError({ reason: "provider_exited", message: "the provider process has exited" }))
        )
      else pending.set(key(id), waiter)
      const response = Deferred.await(waiter).pipe(
        Effect.timeoutOrElse({
          duration: timeoutMs,
          orElse: () => {
            pending.delete(key(id))
            return Effect.fail(
              new TransportError({ reason: "timeout", message: `${method} got no response within ${timeoutMs} ms` })
            )
          }
        })
      )
      return { id, msg: { id, method, params }, response, release: () => pending.delete(key(id)) }
    }

    return {
      pid,
      take: Effect.map(Queue.take(incoming), ({ input, release }) => {
        release()
        return input
      }),
      prepareRequest,
      write,
      stderr: () => (spawned.stderrTail() + spawnError).slice(-stderrLimit),
      isAlive: () => alive,
      kill: (signal, expected) => {
        if (expected) expectedExit = true
        spawned.signalGroup(signal)
      },
      exited: Deferred.await(exitDeferred)
    } satisfies JsonRpcTransport
  })

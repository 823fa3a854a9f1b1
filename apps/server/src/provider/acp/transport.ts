import type * as acp from "@agentclientprotocol/sdk"
import { Writable } from "node:stream"
import { Effect, type Scope } from "effect"
import {
  makeLineSplitter as makeSplitter,
  MAX_LINE_BYTES,
  utf8Head,
  type LineSplitter,
  type ProviderLine
} from "../lines.ts"
import { readLinesPaced, type FlowProbe } from "../inbound.ts"
import { acquireProviderProcess } from "../kernel/ProviderProcess.ts"
import { AdapterError } from "../ProviderAdapter.ts"
import { INVALID_LINE_MAX_BYTES, type InvalidLine } from "./native.ts"
import type { JsonRpcId, Reply } from "./pending.ts"
import { definedFields } from "../../util/definedFields.ts"
import { isJsonRpcId, jsonRpcIdKey } from "../kernel/jsonRpcId.ts"

export { INVALID_LINE_MAX_BYTES, MAX_LINE_BYTES, type LineSplitter }

/** `agent->client:invalid`: a line from the agent that is no JSON-RPC message (its `InvalidLine`). */
export type TrafficDirection = "client->agent" | "agent->client" | "agent->client:invalid"
/**
 * Sees every JSON-RPC message in the order the session processes it (recording): agent
 * requests, notifications, invalid lines and replies the session acts on are reported by the
 * session when it takes them up, our answers when they are settled, everything else as it
 * crosses the wire. A replay then meets the messages in the order the live session handled them.
 */
export type TrafficTap = (dir: TrafficDirection, message: unknown) => void

export interface ChildExit {
  readonly code: number | null
  readonly signal: string | null
}

export interface AcpTransportOptions {
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly cwd: string
  readonly env: Readonly<Record<string, string | undefined>>
  /** Agent → client requests, notifications and lines that are no JSON-RPC message, in wire order. */
  readonly onInbound: (message: InboundMessage) => void
  readonly onExit: (exit: ChildExit) => void
  readonly tap?: TrafficTap
  /** Counters of the inbound queue (see `readLinesPaced`), for tests. */
  readonly probe?: FlowProbe
}

type InboundKind =
  | { readonly kind: "request"; readonly id: JsonRpcId; readonly method: string; readonly params: unknown }
  | { readonly kind: "notification"; readonly method: string; readonly params: unknown }
  /** A line that is no JSON-RPC message: never seen by the SDK, reported to the session instead. */
  | { readonly kind: "invalid"; readonly line: InvalidLine }

export type InboundMessage = InboundKind & {
  /**
   * Reports the message to the tap and frees its place in the transport's bounded queue of
   * agent lines (`INBOUND_QUEUE_LINES`): the session calls it when it takes the message up.
   * Until it does, the message counts as read ahead, and a full queue stops reading the agent.
   */
  readonly record: () => void
}

export interface RequestOptions {
  readonly timeoutMs?: number
  /** `record` reports the reply to the tap (and frees its place, as above); call it when the reply is processed. */
  readonly onReply?: (reply: Reply, record: () => void) => void
}

export interface AcpTransport {
  readonly pid: number
  /**
   * Sends a request and waits for its result. `onReply`, when given, sees the agent's reply at
   * its place in the inbound stream (before any later message), which the promise cannot.
   */
  readonly request: (method: string, params: unknown, options?: RequestOptions) => Effect.Effect<unknown, AdapterError>
  /**
   * Queues a notification for writing, after every message queued before it, and does not wait
   * for the write: an agent that stops reading its stdin while its own writes wait on our
   * bounded reading must not hold up the session's queue (and so our reading) in return.
   */
  readonly notify: (method: string, params: unknown) => Effect.Effect<void, AdapterError>
  /** Writes the client's answer to an agent request (the SDK handler waiting on that id). */
  readonly settle: (id: JsonRpcId, reply: Reply) => void
  readonly stderrTail: () => string
  /** True once `shutdown` began: an exit after that is ours, not a crash. */
  readonly closing: () => boolean
  /** Ends stdin, SIGTERMs the group, SIGKILLs it after a grace period. Idempotent. */
  readonly shutdown: Effect.Effect<void>
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null

// ---- reading the agent's stdout ----------------------------------------------------------
// The SDK's `ndJsonStream` drops a line it cannot use (answering the agent with a JSON-RPC
// error) and tells nobody; the agent's output is therefore read here, line by line, so that
// every such line reaches the session, in stream order, and becomes a `runtime.warning`. A
// line over `MAX_LINE_BYTES` (the SDK's own limit) is the exception: it cannot be read, and it
// may have been a request the agent waits on or the reply a turn waits for, so skipping it
// could leave the session waiting for ever. The transport ends the agent instead (see
// `onTooLong` below), and the session reports why. Reading is paced by the session: at most
// `INBOUND_QUEUE_LINES` lines are read ahead of it (`readLinesPaced`); beyond that the agent's
// writes wait. The SDK sees only requests and the responses to ours: every other message is
// the session's, and the SDK's only use for it was to print its complaints to the console.

/** One line of the agent's output without its line ending; `data` is only its head when too long. */
export type AgentLine = ProviderLine

/**
 * Splits a byte stream at LF (a CR before it is dropped, as the SDK does). A line longer than
 * `maxLineBytes` is not buffered past that: only its head is kept, and its length counted.
 */
export const makeLineSplitter = (maxLineBytes: number = MAX_LINE_BYTES): LineSplitter =>
  makeSplitter(maxLineBytes, INVALID_LINE_MAX_BYTES)

export type DecodedLine =
  | { readonly kind: "blank" }
  | { readonly kind: "message"; readonly message: acp.AnyMessage }
  | { readonly kind: "invalid"; readonly line: InvalidLine }

/**
 * What the SDK's connection would accept as a message, minus a request with a `null` id (it
 * could never be answered by id): a JSON-RPC 2.0 request or notification, or anything shaped
 * like a response (no `method`; an `id`, `result` or `error`), which the SDK matches by id.
 */
const isJsonRpcMessage = (u: Record<string, unknown>): boolean =>
  "method" in u
    ? u.jsonrpc === "2.0" && typeof u.method === "string" && (!("id" in u) || isJsonRpcId(u.id))
    : "id" in u || "result" in u || "error" in u

/** Reads one line of the agent's output: a message, a blank line, or an invalid line. */
export const decodeAgentLine = (line: AgentLine): DecodedLine => {
  const invalid = (reason: InvalidLine["reason"], error?: string): DecodedLine => ({
    kind: "invalid",
    line: {
      reason,
      text: utf8Head(line.data, INVALID_LINE_MAX_BYTES),
      bytes: line.bytes,
      truncated: line.bytes > INVALID_LINE_MAX_BYTES,
      ...definedFields({ error })
    }
  })
  if (line.data.length < line.bytes) return invalid("too_long")
  const text = line.data.toString("utf8")
  if (text.trim().length === 0) return { kind: "blank" }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    return invalid("not_json", error instanceof Error ? error.message : String(error))
  }
  if (Array.isArray(value)) return invalid("batch")
  if (!isRecord(value)) return invalid("not_object")
  if (!isJsonRpcMessage(value)) return invalid("not_jsonrpc")
  // Checked just above to be a request, notification or response-shaped object.
  return { kind: "message", message: value as acp.AnyMessage }
}

/** The answer the SDK gave such a line (JSON-RPC: an error with a `null` id); kept as it was. */
const protocolError = (line: InvalidLine) => ({
  jsonrpc: "2.0" as const,
  id: null,
  error:
    line.reason === "not_json"
      ? { code: -32700, message: "Parse error" }
      : line.reason === "batch"
        ? { code: -32600, message: "Invalid request: JSON-RPC batches are not supported" }
        : { code: -32600, message: "Invalid request" }
})

const classify = (message: unknown): InboundKind | undefined => {
  if (!isRecord(message) || typeof message.method !== "string") return undefined
  if ("id" in message && isJsonRpcId(message.id)) {
    return { kind: "request", id: message.id, method: message.method, params: message.params }
  }
  return "id" in message ? undefined : { kind: "notification", method: message.method, params: message.params }
}

/** A JSON-RPC response (no method) as a reply to one of our requests. */
const replyOf = (message: unknown): { readonly id: JsonRpcId; readonly reply: Reply } | undefined => {
  if (!isRecord(message) || "method" in message || !isJsonRpcId(message.id)) return undefined
  const error = message.error
  if (!isRecord(error)) return { id: message.id, reply: { result: message.result } }
  const code = typeof error.code === "number" ? error.code : -32603
  const text = typeof error.message === "string" ? error.message : "error"
  return {
    id: message.id,
    reply: { error: error.data === undefined ? { code, message: text } : { code, message: text, data: error.data } }
  }
}

/** How much of the agent's stderr is kept (its tail). */
const STDERR_TAIL = 8192

const stderrNote = (stderr: string): string => (stderr.length > 0 ? `; agent stderr: ${stderr.slice(-600)}` : "")

type AcpSdk = typeof import("@agentclientprotocol/sdk")

/**
 * The SDK is loaded with the first ACP session, not when the server starts: it brings zod
 * (~230 modules) that a server with no ACP session never needs (issue 17).
 */
const loadAcpSdk = Effect.tryPromise({
  try: (): Promise<AcpSdk> => import("@agentclientprotocol/sdk"),
  catch: (error) => new AdapterError({ reason: "start_failed", message: `cannot load the ACP SDK: ${String(error)}` })
})

const describe = (sdk: AcpSdk, error: unknown): string =>
  error instanceof sdk.RequestError
    ? `${error.message} (${error.code})`
    : error instanceof Error
      ? error.message
      : String(error)

/**
 * Spawns an ACP agent in its own process group, under a parent-death signal and recorded in
 * `ProcessGroups` (so that neither outlives a crashed server), and connects the SDK's client
 * app to its stdio. Closing the scope ends stdin, then SIGTERMs and finally SIGKILLs the whole
 * group: npm wrappers (codex-acp) otherwise leave their native binary running.
 */
export const spawnAcpTransport = (
  options: AcpTransportOptions
): Effect.Effect<AcpTransport, AdapterError, Scope.Scope> =>
  Effect.gen(function* () {
    const sdk = yield* loadAcpSdk
    let exited: ChildExit | undefined

    // Its own process group, recorded, ended by `shutdown` with the group's grace period (kernel).
    const agentProcess = yield* acquireProviderProcess({ ...options, stderrLimit: STDERR_TAIL }).pipe(
      Effect.mapError((error) => new AdapterError({ reason: "start_failed", message: error.message }))
    )
    const { child, shutdown } = agentProcess
    child.once("exit", (code, signal) => {
      exited = { code, signal }
      options.onExit(exited)
    })

    const waiters = new Map<string, { resolve: (value: unknown) => void; reject: (error: unknown) => void }>()
    const early = new Map<string, Reply>()
    const deliver = (reply: Reply, target: { resolve: (value: unknown) => void; reject: (error: unknown) => void }) => {
      if ("result" in reply) target.resolve(reply.result)
      else target.reject(new sdk.RequestError(reply.error.code, reply.error.message, reply.error.data))
    }

    // Our own NDJSON framing (see `decodeAgentLine`): writes go to stdin in call order.
    const stdin = (Writable.toWeb(child.stdin) as WritableStream<Uint8Array>).getWriter()
    const encoder = new TextEncoder()
    const writeMessage = (message: unknown): Promise<void> =>
      stdin.write(encoder.encode(`${JSON.stringify(message)}\n`))
    // Our own requests, bound to the JSON-RPC id the SDK gives them as they are written (the
    // SDK writes in call order), so their replies can be seen in wire order.
    const unsent: Array<{
      readonly method: string
      readonly onReply: ((reply: Reply, record: () => void) => void) | undefined
    }> = []
    const sent = new Map<string, ((reply: Reply, record: () => void) => void) | undefined>()
    /** Our answers, already reported to the tap when they were settled. */
    const recordedAnswers = new Set<string>()
    /**
     * Every request of ours written and not yet answered, by id: a response to anything else
     * (an unknown id, `null`, none) is not handed to the SDK, which could only print it to the
     * console ("Got response to unknown request"); the session reports it instead.
     */
    const outstanding = new Set<string>()
    /** Reports the message to the tap and frees its line's place in the queue, once. */
    const recorder = (release: () => void, report: () => void) => {
      let recorded = false
      return () => {
        release()
        if (recorded) return
        recorded = true
        report()
      }
    }
    /** An agent message, seen here before the SDK gets it. */
    const inbound = (message: acp.AnyMessage, release: () => void) => {
      const record = recorder(release, () => options.tap?.("agent->client", message))
      const kind = classify(message)
      if (kind !== undefined) return options.onInbound({ ...kind, record })
      const reply = replyOf(message)
      const onReply = reply === undefined ? undefined : sent.get(jsonRpcIdKey(reply.id))
      if (reply !== undefined) sent.delete(jsonRpcIdKey(reply.id))
      if (reply !== undefined && onReply !== undefined) onReply(reply.reply, record)
      else record()
    }
    const invalidLine = (line: InvalidLine, release: () => void) => {
      const answer = line.reason === "unknown_response" ? undefined : protocolError(line)
      // Answered at once, as the SDK did (nothing waits on it; a write to a dead agent just
      // fails), but recorded next to the line, like every answer of ours. A response is never
      // answered (JSON-RPC).
      const record = recorder(release, () => {
        options.tap?.("agent->client:invalid", line)
        if (answer !== undefined) options.tap?.("client->agent", answer)
      })
      options.onInbound({ kind: "invalid", line, record })
      if (answer !== undefined) writeMessage(answer).catch(() => undefined)
    }
    /** A response-shaped message answering none of our outstanding requests, as an invalid line. */
    const unknownResponse = (line: AgentLine, message: acp.AnyMessage): InvalidLine | undefined => {
      if ("method" in message) return undefined
      const id = "id" in message ? message.id : undefined
      if (isJsonRpcId(id) && outstanding.delete(jsonRpcIdKey(id))) return undefined
      const text = utf8Head(line.data, INVALID_LINE_MAX_BYTES)
      return { reason: "unknown_response", text, bytes: line.bytes, truncated: line.bytes > INVALID_LINE_MAX_BYTES }
    }
    /** The SDK stopped reading, or stdout ended or failed: later lines go nowhere. */
    let done = false
    const readable = new ReadableStream<acp.AnyMessage>({
      start(controller) {
        /**
         * One line of the agent's output, at its place in the stream; `release` frees its place
         * in the queue (through `record`, when the session takes it up). Only requests and the
         * responses to ours go on to the SDK: it parks a responder for each request (answered by
         * `settle`) and completes our requests. Notifications are the session's alone; the SDK
         * would only validate them again (and print a failure to the console).
         */
        const take = (line: AgentLine, release: () => void) => {
          if (done) return release()
          const decoded = decodeAgentLine(line)
          if (line.bytes > MAX_LINE_BYTES) {
            // Over the bound: the agent's group is already being killed (`onTooLong`); the
            // session reports why. Nothing after it is read.
            if (decoded.kind !== "invalid") return release()
            const record = recorder(release, () => options.tap?.("agent->client:invalid", decoded.line))
            return options.onInbound({ kind: "invalid", line: decoded.line, record })
          }
          if (decoded.kind === "blank") return release()
          if (decoded.kind === "invalid") return invalidLine(decoded.line, release)
          const unknown = unknownResponse(line, decoded.message)
          if (unknown !== undefined) return invalidLine(unknown, release)
          inbound(decoded.message, release)
          if (classify(decoded.message)?.kind !== "notification") controller.enqueue(decoded.message)
        }
        readLinesPaced({
          stream: child.stdout,
          splitter: makeLineSplitter(),
          ...definedFields({ probe: options.probe }),
          // The line may have been a request the agent waits on or the reply a turn waits for.
          onTooLong: () => agentProcess.signalGroup("SIGKILL"),
          onLine: take,
          onEnd: (error) => {
            if (done) return
            done = true
            if (error === undefined) controller.close()
            else controller.error(error)
          }
        })
      },
      cancel() {
        done = true
      }
    })
    const writable = new WritableStream<acp.AnyMessage>({
      write(message) {
        const answered = replyOf(message)
        const recorded = answered !== undefined && recordedAnswers.delete(jsonRpcIdKey(answered.id))
        if (!recorded) options.tap?.("client->agent", message)
        const outbound = classify(message)
        if (outbound?.kind === "request") {
          outstanding.add(jsonRpcIdKey(outbound.id))
          const index = unsent.findIndex((u) => u.method === outbound.method)
          const slot = index >= 0 ? unsent.splice(index, 1)[0] : undefined
          if (slot !== undefined) sent.set(jsonRpcIdKey(outbound.id), slot.onReply)
        }
        return writeMessage(message)
      }
    })

    // Every agent request is answered by `settle`, in the order the session decides; the
    // fallback handlers only park the SDK's responder until then.
    const app = sdk
      .client({ name: "planbridge" })
      .onRequest("*", ({ requestId }) => {
        const key = jsonRpcIdKey(isJsonRpcId(requestId) ? requestId : String(requestId))
        return new Promise<unknown>((resolve, reject) => {
          const ready = early.get(key)
          if (ready !== undefined) {
            early.delete(key)
            deliver(ready, { resolve, reject })
          } else {
            waiters.set(key, { resolve, reject })
          }
        })
      })
      .onNotification("*", () => undefined)
    const connection = app.connect({ readable, writable })
    yield* Effect.addFinalizer(() => Effect.sync(() => connection.close()))

    const transport: AcpTransport = {
      pid: agentProcess.pid,
      request: (method, params, requestOptions = {}) => {
        const { timeoutMs, onReply } = requestOptions
        const call = Effect.tryPromise({
          try: () => {
            // Every request takes a slot, so per-method FIFO order matches the SDK's writes.
            unsent.push({ method, onReply })
            return connection.agent.request<unknown, unknown>(method, params)
          },
          catch: (error) =>
            new AdapterError({
              reason: exited !== undefined || connection.signal.aborted ? "provider_exited" : "protocol",
              message: `${method} failed: ${describe(sdk, error)}${stderrNote(agentProcess.stderrTail())}`
            })
        })
        return timeoutMs === undefined
          ? call
          : Effect.timeoutOrElse(call, {
              duration: timeoutMs,
              orElse: () =>
                Effect.fail(
                  new AdapterError({ reason: "timeout", message: `${method}: no answer within ${timeoutMs} ms` })
                )
            })
      },
      notify: (method, params) =>
        Effect.suspend(() => {
          if (exited !== undefined || connection.signal.aborted) {
            const message = `${method} failed: the agent has exited`
            return Effect.fail(new AdapterError({ reason: "provider_exited", message }))
          }
          // Queued now, in order; a write that fails later is a dead agent, which its exit reports.
          connection.agent.notify(method, params).catch(() => undefined)
          return Effect.void
        }),
      settle: (id, reply) => {
        const key = jsonRpcIdKey(id)
        // Recorded now, at its place among the messages the session processed, not when the SDK
        // gets round to writing it (an agent message may be recorded in between otherwise).
        if (options.tap !== undefined) {
          recordedAnswers.add(key)
          options.tap("client->agent", {
            jsonrpc: "2.0",
            id,
            ...("result" in reply ? { result: reply.result } : { error: reply.error })
          })
        }
        const waiter = waiters.get(key)
        if (waiter !== undefined) {
          waiters.delete(key)
          deliver(reply, waiter)
        } else {
          early.set(key, reply)
        }
      },
      stderrTail: agentProcess.stderrTail,
      closing: agentProcess.closing,
      shutdown
    }
    return transport
  })

import type * as acp from "@agentclientprotocol/sdk"
import { Writable } from "node:stream"
import { Effect, type Scope } from "effect"
import { MAX_LINE_BYTES, utf8Head, type LineSplitter } from "../lines.ts"
import { readLinesPaced } from "../inbound.ts"
import { acquireProviderProcess } from "../kernel/ProviderProcess.ts"
import { AdapterError } from "../ProviderAdapter.ts"
import { INVALID_LINE_MAX_BYTES, type InvalidLine } from "./native.ts"
import type { Reply } from "./pending.ts"
import { definedFields } from "../../util/definedFields.ts"
import { isJsonRpcId, jsonRpcIdKey } from "../kernel/jsonRpcId.ts"
import { classify, decodeAgentLine, makeLineSplitter, protocolError, replyOf, type AgentLine } from "./agentLines.ts"
import type { AcpTransport, AcpTransportOptions, ChildExit } from "./transportContract.ts"

export { INVALID_LINE_MAX_BYTES, MAX_LINE_BYTES, type LineSplitter }
export { decodeAgentLine, makeLineSplitter, type AgentLine, type DecodedLine } from "./agentLines.ts"
export type * from "./transportContract.ts"

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
      const record = recorder(release, () => options.tap?.({ dir: "in", msg: message }))
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
        options.tap?.({ dir: "local", msg: { kind: "invalid", ...line } })
        if (answer !== undefined) options.tap?.({ dir: "out", msg: answer })
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
            const record = recorder(release, () =>
              options.tap?.({ dir: "local", msg: { kind: "invalid", ...decoded.line } })
            )
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
        if (!recorded) options.tap?.({ dir: "out", msg: message })
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
          const msg = { jsonrpc: "2.0", id, ...("result" in reply ? { result: reply.result } : { error: reply.error }) }
          options.tap({ dir: "out", msg })
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

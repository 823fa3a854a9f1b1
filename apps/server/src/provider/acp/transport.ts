import * as acp from "@agentclientprotocol/sdk"
import { spawn, type ChildProcess } from "node:child_process"
import { Readable, Writable } from "node:stream"
import { Effect, type Scope } from "effect"
import { AdapterError } from "../ProviderAdapter.ts"
import type { JsonRpcId, Reply } from "./pending.ts"

export type TrafficDirection = "client->agent" | "agent->client"
/**
 * Sees every JSON-RPC message in the order the session processes it (recording): agent
 * requests, notifications and replies the session acts on are reported by the session when it
 * takes them up, our answers when they are settled, everything else as it crosses the wire.
 * A replay then meets the messages in the order the live session handled them.
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
  /** Agent → client requests and notifications, in wire order. */
  readonly onInbound: (message: InboundMessage) => void
  readonly onExit: (exit: ChildExit) => void
  readonly tap?: TrafficTap
}

type InboundKind =
  | { readonly kind: "request"; readonly id: JsonRpcId; readonly method: string; readonly params: unknown }
  | { readonly kind: "notification"; readonly method: string; readonly params: unknown }

export type InboundMessage = InboundKind & {
  /** Reports the message to the tap; the session calls it when it processes the message. */
  readonly record: () => void
}

export interface RequestOptions {
  readonly timeoutMs?: number
  /** `record` reports the reply to the tap; call it when the reply is processed. */
  readonly onReply?: (reply: Reply, record: () => void) => void
}

export interface AcpTransport {
  readonly pid: number
  /**
   * Sends a request and waits for its result. `onReply`, when given, sees the agent's reply at
   * its place in the inbound stream (before any later message), which the promise cannot.
   */
  readonly request: (method: string, params: unknown, options?: RequestOptions) => Effect.Effect<unknown, AdapterError>
  readonly notify: (method: string, params: unknown) => Effect.Effect<void, AdapterError>
  /** Writes the client's answer to an agent request (the SDK handler waiting on that id). */
  readonly settle: (id: JsonRpcId, reply: Reply) => void
  readonly stderrTail: () => string
  /** True once `shutdown` began: an exit after that is ours, not a crash. */
  readonly closing: () => boolean
  /** Ends stdin, SIGTERMs the group, SIGKILLs it after a grace period. Idempotent. */
  readonly shutdown: Effect.Effect<void>
}

const keyOf = (id: JsonRpcId): string => `${typeof id}:${id}`

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null

const classify = (message: unknown): InboundKind | undefined => {
  if (!isRecord(message) || typeof message.method !== "string") return undefined
  if ("id" in message && (typeof message.id === "string" || typeof message.id === "number")) {
    return { kind: "request", id: message.id, method: message.method, params: message.params }
  }
  return "id" in message ? undefined : { kind: "notification", method: message.method, params: message.params }
}

/** A JSON-RPC response (no method) as a reply to one of our requests. */
const replyOf = (message: unknown): { readonly id: JsonRpcId; readonly reply: Reply } | undefined => {
  if (!isRecord(message) || "method" in message || !(typeof message.id === "string" || typeof message.id === "number")) return undefined
  const error = message.error
  if (!isRecord(error)) return { id: message.id, reply: { result: message.result } }
  const code = typeof error.code === "number" ? error.code : -32603
  const text = typeof error.message === "string" ? error.message : "error"
  return { id: message.id, reply: { error: error.data === undefined ? { code, message: text } : { code, message: text, data: error.data } } }
}

const killGroup = (child: ChildProcess, signal: NodeJS.Signals): void => {
  if (child.pid === undefined) return
  try {
    process.kill(-child.pid, signal)
  } catch {
    // ESRCH: the group is already gone.
  }
}

const describe = (error: unknown): string =>
  error instanceof acp.RequestError ? `${error.message} (${error.code})` : error instanceof Error ? error.message : String(error)

/**
 * Spawns an ACP agent in its own process group and connects the SDK's client app to its
 * stdio. Closing the scope ends stdin, then SIGTERMs and finally SIGKILLs the whole group:
 * npm wrappers (codex-acp) otherwise leave their native binary running.
 */
export const spawnAcpTransport = (options: AcpTransportOptions): Effect.Effect<AcpTransport, AdapterError, Scope.Scope> =>
  Effect.gen(function* () {
    let closing = false
    let stderr = ""
    let exited: ChildExit | undefined
    const exitWaiters: Array<() => void> = []

    const child = yield* Effect.callback<ChildProcess, AdapterError>((resume) => {
      const proc = spawn(options.command, [...options.args], {
        cwd: options.cwd,
        env: options.env,
        detached: true,
        stdio: ["pipe", "pipe", "pipe"]
      })
      proc.once("spawn", () => resume(Effect.succeed(proc)))
      proc.once("error", (error) => {
        if (proc.pid === undefined) {
          resume(Effect.fail(new AdapterError({ reason: "start_failed", message: `cannot start ${options.command}: ${error.message}` })))
        }
      })
    })

    let stopping: Promise<void> | undefined
    const shutdown = Effect.promise(() => {
      stopping ??= (async () => {
        closing = true
        child.stdin?.end()
        if (exited === undefined) {
          killGroup(child, "SIGTERM")
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, 1500)
            exitWaiters.push(() => {
              clearTimeout(timer)
              resolve()
            })
          })
        }
        killGroup(child, "SIGKILL")
      })()
      return stopping
    })
    yield* Effect.addFinalizer(() => shutdown)

    child.stderr?.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString("utf8")).slice(-8192)
    })
    child.once("exit", (code, signal) => {
      exited = { code, signal }
      // Grandchildren (a wrapper's native binary) must not outlive the agent.
      killGroup(child, "SIGKILL")
      options.onExit(exited)
      for (const waiter of exitWaiters.splice(0)) waiter()
    })

    const waiters = new Map<string, { resolve: (value: unknown) => void; reject: (error: unknown) => void }>()
    const early = new Map<string, Reply>()
    const deliver = (reply: Reply, target: { resolve: (value: unknown) => void; reject: (error: unknown) => void }) => {
      if ("result" in reply) target.resolve(reply.result)
      else target.reject(new acp.RequestError(reply.error.code, reply.error.message, reply.error.data))
    }

    const stream = acp.ndJsonStream(
      Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>,
      Readable.toWeb(child.stdout!) as ReadableStream<Uint8Array>
    )
    // Our own requests, bound to the JSON-RPC id the SDK gives them as they are written (the
    // SDK writes in call order), so their replies can be seen in wire order.
    const unsent: Array<{ readonly method: string; readonly onReply: ((reply: Reply, record: () => void) => void) | undefined }> = []
    const sent = new Map<string, ((reply: Reply, record: () => void) => void) | undefined>()
    /** Our answers, already reported to the tap when they were settled. */
    const recordedAnswers = new Set<string>()
    const readable = stream.readable.pipeThrough(
      new TransformStream<acp.AnyMessage, acp.AnyMessage>({
        transform(message, controller) {
          const record = () => options.tap?.("agent->client", message)
          const inbound = classify(message)
          if (inbound !== undefined) options.onInbound({ ...inbound, record })
          else {
            const reply = replyOf(message)
            const onReply = reply === undefined ? undefined : sent.get(keyOf(reply.id))
            if (reply !== undefined) sent.delete(keyOf(reply.id))
            if (reply !== undefined && onReply !== undefined) onReply(reply.reply, record)
            else record()
          }
          controller.enqueue(message)
        }
      })
    )
    const writer = stream.writable.getWriter()
    const writable = new WritableStream<acp.AnyMessage>({
      write(message) {
        const answered = replyOf(message)
        const recorded = answered !== undefined && recordedAnswers.delete(keyOf(answered.id))
        if (!recorded) options.tap?.("client->agent", message)
        const outbound = classify(message)
        if (outbound?.kind === "request") {
          const index = unsent.findIndex((u) => u.method === outbound.method)
          const slot = index >= 0 ? unsent.splice(index, 1)[0] : undefined
          if (slot !== undefined) sent.set(keyOf(outbound.id), slot.onReply)
        }
        return writer.write(message)
      },
      close: () => writer.close(),
      abort: (reason) => writer.abort(reason)
    })

    // Every agent request is answered by `settle`, in the order the session decides; the
    // fallback handlers only park the SDK's responder until then.
    const app = acp
      .client({ name: "planbridge" })
      .onRequest("*", ({ requestId }) => {
        const key = keyOf(typeof requestId === "string" || typeof requestId === "number" ? requestId : String(requestId))
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
      pid: child.pid ?? -1,
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
              message: `${method} failed: ${describe(error)}${stderr.length > 0 ? `; agent stderr: ${stderr.slice(-600)}` : ""}`
            })
        })
        return timeoutMs === undefined
          ? call
          : Effect.timeoutOrElse(call, {
              duration: timeoutMs,
              orElse: () => Effect.fail(new AdapterError({ reason: "timeout", message: `${method}: no answer within ${timeoutMs} ms` }))
            })
      },
      notify: (method, params) =>
        Effect.tryPromise({
          try: () => connection.agent.notify(method, params),
          catch: (error) => new AdapterError({ reason: "provider_exited", message: `${method} failed: ${describe(error)}` })
        }),
      settle: (id, reply) => {
        const key = keyOf(id)
        // Recorded now, at its place among the messages the session processed, not when the SDK
        // gets round to writing it (an agent message may be recorded in between otherwise).
        if (options.tap !== undefined) {
          recordedAnswers.add(key)
          options.tap("client->agent", { jsonrpc: "2.0", id, ...("result" in reply ? { result: reply.result } : { error: reply.error }) })
        }
        const waiter = waiters.get(key)
        if (waiter !== undefined) {
          waiters.delete(key)
          deliver(reply, waiter)
        } else {
          early.set(key, reply)
        }
      },
      stderrTail: () => stderr,
      closing: () => closing,
      shutdown
    }
    return transport
  })

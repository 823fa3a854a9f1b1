import { Deferred, Effect, Queue, type Scope } from "effect"
import { utf8Head } from "../lines.ts"
import { readLinesPaced } from "../inbound.ts"
import { acquireProviderProcess } from "../kernel/ProviderProcess.ts"
import type { TranscriptEntry } from "../kernel/transcript.ts"
import { AdapterError } from "../ProviderAdapter.ts"
import { INVALID_LINE_MAX_BYTES, type InvalidLine } from "./native.ts"
import { definedFields } from "../../util/definedFields.ts"
import { isJsonRpcId, jsonRpcIdKey } from "../kernel/jsonRpcId.ts"
import { decodeAgentLine, makeLineSplitter, replyOf, type AgentLine } from "./agentLines.ts"
import type { AcpTransport, AcpTransportOptions, PreparedRequest } from "./transportContract.ts"

export { INVALID_LINE_MAX_BYTES }
export { decodeAgentLine, makeLineSplitter } from "./agentLines.ts"
export type * from "./transportContract.ts"

/** How much of the agent's stderr is kept (its tail). */
const STDERR_TAIL = 8192

const stderrNote = (stderr: string): string => (stderr.length > 0 ? `; agent stderr: ${stderr.slice(-600)}` : "")

/**
 * JSON-RPC 2.0 over an ACP agent's stdio, NDJSON framed, our request ids our own (the ACP SDK's
 * types are used, its connection is not: it assigned ids we then had to guess). The agent runs
 * in its own process group, under a parent-death signal and recorded in `ProcessGroups`;
 * closing the scope ends stdin, then SIGTERMs and finally SIGKILLs the whole group (npm
 * wrappers such as codex-acp otherwise leave their native binary running). Every line the agent
 * writes reaches `take` in order, read at most `INBOUND_QUEUE_LINES` ahead of the session
 * (`readLinesPaced`): a line that is no JSON-RPC message, or a response to no request of ours,
 * as an invalid line, never dropped; a line over `MAX_LINE_BYTES` kills the group (it may have
 * been a request the agent waits on or the reply a turn waits for), and the exit says why.
 */
export const spawnAcpTransport = (
  options: AcpTransportOptions
): Effect.Effect<AcpTransport, AdapterError, Scope.Scope> =>
  Effect.gen(function* () {
    const agentProcess = yield* acquireProviderProcess({ ...options, stderrLimit: STDERR_TAIL }).pipe(
      Effect.mapError((error) => new AdapterError({ reason: "start_failed", message: error.message }))
    )
    const { child, shutdown } = agentProcess
    // Bounded by the paced reader: at most INBOUND_QUEUE_LINES lines (and the exit) wait here.
    const incoming = yield* Queue.unbounded<{ readonly line: TranscriptEntry; readonly release: () => void }>()
    const offer = (line: TranscriptEntry, release: () => void = () => undefined) =>
      Queue.offerUnsafe(incoming, { line, release })
    /** Requests written and not yet answered, by id: a response to anything else is an invalid line. */
    const outstanding = new Set<string>()
    /** Callers waiting for a response, until the session has mapped it. */
    const waiting = new Map<string, { method: string; done: Deferred.Deferred<unknown, AdapterError> }>()
    let exit: { readonly code: number | null; readonly signal: string | null } | undefined
    let nextId = 0

    const invalid = (line: InvalidLine, release: () => void) =>
      offer({ dir: "local", msg: { kind: "invalid", ...line } }, release)
    /** A response-shaped message answering none of our outstanding requests, as an invalid line. */
    const unknownResponse = (line: AgentLine, message: Record<string, unknown>): InvalidLine | undefined => {
      if ("method" in message) return undefined
      if (isJsonRpcId(message.id) && outstanding.delete(jsonRpcIdKey(message.id))) return undefined
      const text = utf8Head(line.data, INVALID_LINE_MAX_BYTES)
      return { reason: "unknown_response", text, bytes: line.bytes, truncated: line.bytes > INVALID_LINE_MAX_BYTES }
    }
    const take = (line: AgentLine, release: () => void) => {
      const decoded = decodeAgentLine(line)
      if (decoded.kind === "blank") return release()
      if (decoded.kind === "invalid") return invalid(decoded.line, release)
      const message = decoded.message as Record<string, unknown>
      const unknown = unknownResponse(line, message)
      if (unknown !== undefined) return invalid(unknown, release)
      offer({ dir: "in", msg: message }, release)
    }
    // The exit is offered once stdout is drained (and the child gone), so no line is lost behind it.
    let stdoutClosed = false
    const finish = () => {
      if (exit === undefined || !stdoutClosed) return
      for (const { method, done } of waiting.values()) {
        const message = `${method} failed: the agent exited${stderrNote(agentProcess.stderrTail())}`
        Deferred.doneUnsafe(done, Effect.fail(new AdapterError({ reason: "provider_exited", message })))
      }
      waiting.clear()
      const exitKind = agentProcess.closing() ? "killed" : exit.code === 0 ? "graceful" : "crashed"
      const stderr = agentProcess.stderrTail()
      const message = stderr.length > 0 && exitKind === "crashed" ? { message: stderr.slice(-2000) } : {}
      offer({ dir: "local", msg: { kind: "exit", exitKind, exitCode: exit.code, signal: exit.signal, ...message } })
    }
    child.once("exit", (code, signal) => {
      exit = { code, signal }
      finish()
    })
    readLinesPaced({
      stream: child.stdout,
      splitter: makeLineSplitter(),
      ...definedFields({ probe: options.probe }),
      onTooLong: () => agentProcess.signalGroup("SIGKILL"),
      onLine: take,
      onEnd: () => {
        stdoutClosed = true
        finish()
      }
    })

    const write: AcpTransport["write"] = (msg) =>
      Effect.suspend(() => {
        if (exit !== undefined || child.stdin.destroyed)
          return Effect.fail(new AdapterError({ reason: "provider_exited", message: "the agent has exited" }))
        // A write that fails later is a dead agent, which its exit reports.
        child.stdin.write(`${JSON.stringify(msg)}\n`, () => undefined)
        return Effect.void
      })

    const prepareRequest = (method: string, params: unknown): PreparedRequest => {
      const id = nextId++
      const done = Deferred.makeUnsafe<unknown, AdapterError>()
      if (exit !== undefined) {
        const message = `${method} failed: the agent has exited`
        Deferred.doneUnsafe(done, Effect.fail(new AdapterError({ reason: "provider_exited", message })))
      } else {
        outstanding.add(jsonRpcIdKey(id))
        waiting.set(jsonRpcIdKey(id), { method, done })
      }
      return { msg: { jsonrpc: "2.0", id, method, params }, response: Deferred.await(done) }
    }

    const mapped = (line: TranscriptEntry) => {
      const response = line.dir === "in" ? replyOf(line.msg) : undefined
      const waiter = response === undefined ? undefined : waiting.get(jsonRpcIdKey(response.id))
      if (response === undefined || waiter === undefined) return
      waiting.delete(jsonRpcIdKey(response.id))
      const { reply } = response
      if ("result" in reply) return Deferred.doneUnsafe(waiter.done, Effect.succeed(reply.result))
      const message = `${waiter.method} failed: ${reply.error.message} (${reply.error.code})${stderrNote(agentProcess.stderrTail())}`
      Deferred.doneUnsafe(waiter.done, Effect.fail(new AdapterError({ reason: "protocol", message })))
    }

    return {
      pid: agentProcess.pid,
      take: Effect.map(Queue.take(incoming), ({ line, release }) => {
        release()
        return line
      }),
      mapped,
      prepareRequest,
      write,
      exited: () => exit,
      stderrTail: agentProcess.stderrTail,
      shutdown
    } satisfies AcpTransport
  })

import { Deferred, Effect, Exit } from "effect"
import { rawOf } from "../kernel/EventDraft.ts"
import type { JobQueue } from "../kernel/JobQueue.ts"
import type { AdapterError } from "../ProviderAdapter.ts"
import { cancelReply, type Reply } from "./pending.ts"
import type { AcpSessionEvents } from "./sessionEvents.ts"
import type { AcpTranslator } from "./translator.ts"
import type { AcpTransport, ChildExit, InboundMessage } from "./transportContract.ts"

/**
 * What an ACP session does with what the agent sends (its requests, notifications, invalid
 * lines) and with its exit: each becomes a job, translated, emitted, and only then answered.
 */
export interface AcpInboundDeps {
  readonly translator: AcpTranslator
  readonly events: AcpSessionEvents
  readonly jobs: JobQueue
  /** Runs a job, logging its failure instead of failing the queue. */
  readonly logged: (effect: Effect.Effect<void, AdapterError>) => Effect.Effect<void>
  /** Writes our answer to an agent request. */
  readonly settle: (id: string | number, reply: Reply) => void
  /** The transport, once spawned (its callbacks are wired before that). */
  readonly transport: () => AcpTransport | undefined
  /** Told of the exit at once; `exitProcessed` completes once it is mapped. */
  readonly exited: (exit: ChildExit) => void
  readonly exitProcessed: Deferred.Deferred<void>
}

export const makeAcpInbound = (deps: AcpInboundDeps) => {
  const { translator, jobs, logged, settle, exitProcessed } = deps
  const { emitAll, translate, emitFrom } = deps.events
  const onInbound = (message: InboundMessage): void => {
    if (message.kind === "invalid") {
      const { line } = message
      const report = emitFrom("invalid_line", line, () => translator.invalidLine(line))
      const job = Effect.andThen(Effect.sync(message.record), report)
      jobs.enqueue(logged(job))
      return
    }
    const job =
      message.kind === "notification"
        ? Effect.gen(function* () {
            message.record()
            let replies: ReadonlyArray<{ readonly id: string | number; readonly reply: Reply }> = []
            const drafts = translate(message.method, message.params, () => {
              const out = translator.notification(message.method, message.params)
              replies = out.replies
              return out.drafts
            })
            yield* emitAll(drafts)
            for (const { id, reply } of replies) settle(id, reply)
          })
        : Effect.gen(function* () {
            message.record()
            let reply: Reply | undefined
            const drafts = translate(message.method, message.params, () => {
              const out = translator.request(message.id, message.method, message.params)
              reply = out.reply
              return out.drafts
            })
            const emitted = yield* Effect.exit(emitAll(drafts))
            const pending = translator.pending.all().find((p) => p.nativeId === message.id)
            if (Exit.isFailure(emitted) && pending !== undefined) {
              // Nobody can see this request: answer it now rather than stall the agent.
              translator.pending.take(message.id)
              reply = cancelReply(pending)
            } else if (reply === undefined && pending === undefined) {
              reply = { error: { code: -32603, message: "Internal error" } }
            }
            if (reply !== undefined) settle(message.id, reply)
            yield* emitted
          })
    jobs.enqueue(logged(job))
  }

  const onExit = (exit: ChildExit): void => {
    deps.exited(exit)
    const exitKind = deps.transport()?.closing() === true ? "killed" : exit.code === 0 ? "graceful" : "crashed"
    const stderr = deps.transport()?.stderrTail() ?? ""
    const info = {
      exitKind,
      exitCode: exit.code,
      signal: exit.signal,
      ...(stderr.length > 0 && exitKind === "crashed" ? { message: stderr.slice(-2000) } : {})
    } as const
    const job = emitFrom("exit", exit, () => translator.exited(info, rawOf("planbridge", "process.exit", exit))).pipe(
      Effect.ensuring(Deferred.succeed(exitProcessed, undefined))
    )
    jobs.enqueue(logged(job))
  }
  return { onInbound, onExit }
}

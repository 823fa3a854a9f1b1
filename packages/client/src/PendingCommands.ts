import { decodeCommandResult, type Command, type CommandSuccess, type ThreadId } from "@planbridge/contracts"
import { Cause, Exit } from "effect"
import { PlanbridgeError } from "./PlanbridgeError.ts"

type Pending = {
  readonly command: Command
  /** Safe to send again after a reconnect: it carries a `clientRequestId`, or it changes nothing. */
  readonly resendable: boolean
  /** Settles the command with a `result` frame's `result`, decoded with its command's `success` Schema. */
  readonly resolve: (result: unknown) => void
  readonly reject: (error: PlanbridgeError) => void
}

/**
 * `thread.resume` is resendable too: on a live thread it starts nothing and answers `resumed: false`;
 * and `thread.archive`: archiving again keeps the first time, unarchiving again changes nothing.
 */
const resendable = (command: Command): boolean =>
  "clientRequestId" in command ||
  command.type === "threads.list" ||
  command.type === "threads.subscribe" ||
  command.type === "threads.unsubscribe" ||
  command.type === "thread.unsubscribe" ||
  command.type === "thread.history" ||
  command.type === "thread.resume" ||
  command.type === "thread.archive"

/**
 * The commands sent (or to send) and not answered yet, by the `id` their frame carries, and
 * the ones waiting for the connection to open. After a drop, what may go again is queued
 * again; the rest fails `disconnected`.
 */
export class PendingCommands {
  private nextId = 0
  private readonly pending = new Map<string, Pending>()
  /** Commands waiting for the connection to open. */
  private readonly queued: Array<string> = []

  /**
   * Registers a command until its `result` or `error`; returns the id to send it under. A result
   * that is not what the command table says the command answers rejects it `bad_frame`.
   */
  add<C extends Command>(
    command: C,
    resolve: (result: CommandSuccess<C["type"]>) => void,
    reject: (error: PlanbridgeError) => void
  ): string {
    const id = `c${++this.nextId}`
    const type: C["type"] = command.type
    const settle = (json: unknown): void => {
      const decoded = decodeCommandResult(type, json)
      if (Exit.isSuccess(decoded)) return resolve(decoded.value)
      const why = Cause.findErrorOption(decoded.cause)
      const detail = why._tag === "Some" ? why.value.message : Cause.pretty(decoded.cause)
      reject(
        new PlanbridgeError({
          code: "bad_frame",
          message: `the result of ${type} does not decode: ${detail}`,
          path: ["result"]
        })
      )
    }
    this.pending.set(id, { command, resendable: resendable(command), resolve: settle, reject })
    return id
  }

  /** The command registered under `id`, while it is not answered. */
  command(id: string): Command | undefined {
    return this.pending.get(id)?.command
  }

  /** Holds `id` until the connection opens. */
  queue(id: string): void {
    this.queued.push(id)
  }

  /** The ids to send now that the connection is open, in the order they were queued. */
  takeQueued(): Array<string> {
    return this.queued.splice(0)
  }

  /** The command's `result` arrived (nothing happens for an id already settled); it is decoded here. */
  resolve(id: string, result: unknown): void {
    const pending = this.pending.get(id)
    this.pending.delete(id)
    pending?.resolve(result)
  }

  /** The command's `error` arrived (nothing happens for an id already settled). */
  reject(id: string, error: PlanbridgeError): void {
    const pending = this.pending.get(id)
    this.pending.delete(id)
    pending?.reject(error)
  }

  /** The threads a `thread.subscribe` is pending for (it is sent as it is after a reconnect). */
  subscribing(): Set<ThreadId> {
    return new Set(
      [...this.pending.values()].flatMap((p) => (p.command.type === "thread.subscribe" ? [p.command.threadId] : []))
    )
  }

  /**
   * The connection dropped with `code`: what the server never answered goes again under its
   * `clientRequestId` (subscribes too, asking for what the store lacks then); the rest fails.
   */
  dropped(code: number): void {
    for (const [id, pending] of this.pending) {
      if (pending.resendable || pending.command.type === "thread.subscribe") {
        if (!this.queued.includes(id)) this.queued.push(id)
        continue
      }
      this.pending.delete(id)
      pending.reject(
        new PlanbridgeError({
          code: "disconnected",
          message: `the connection dropped (${code}) before ${pending.command.type} was answered`
        })
      )
    }
  }

  /** The client ended: every command fails with `error`, and nothing is left to send. */
  rejectAll(error: PlanbridgeError): void {
    for (const pending of this.pending.values()) pending.reject(error)
    this.pending.clear()
    this.queued.length = 0
  }
}

import { Deferred, Effect, Layer, Option, Queue, Schema } from "effect"
import { randomUUID } from "node:crypto"
import type pg from "pg"
import { CommandRelay, RelayReply } from "../CommandRelay.ts"
import { RelayLost, RelayTokenMismatch, RelayUnreachable, StoreError, storeFailure } from "../StoreError.ts"
import { makeCommandSeal } from "./CommandSeal.ts"
import { PgDatabase } from "./PgDatabase.ts"
import { PgEventLog } from "./PgEventLog.ts"

/** The NOTIFY that tells an owner a command waits for it (payload: the owner's id). */
const COMMANDS_CHANNEL = "planbridge_commands"
/** The NOTIFY that tells a requester its reply is there (payload: the command's id). */
const REPLIES_CHANNEL = "planbridge_replies"
const RECONNECT_DELAY = "1 second"

const decodeReply = Schema.decodeUnknownSync(Schema.fromJsonString(RelayReply))
/** The reply of an owner that could not open a command: sealed under another token. */
const UNOPENED = "unopened"

type Signal = { readonly take: true } | { readonly reply: string } | "reconnect"

/**
 * `CommandRelay` on PostgreSQL: a `relayed_commands` row per command plus a NOTIFY each way. The
 * requester inserts the row (`sent`) and notifies the owner; the owner takes every `sent` row of
 * its own (`taken`: exactly once, also when a NOTIFY was missed — it looks again every third of
 * the lease time), runs it, stores the sealed reply (`done`) and notifies the requester, which
 * deletes the row as it reads it. A requester that hears nothing within the lease time withdraws
 * its row (`abandoned`) unless the owner took it: then the command never runs, and the caller is
 * told `unreachable`; a taken command is waited for until it is done or the owner's lease is
 * gone (`lost`: it may have run).
 */
export const pgCommandRelay = (options: { readonly token: string; readonly ttlMs: number }) =>
  Layer.effect(
    CommandRelay,
    Effect.gen(function* () {
      const database = yield* PgDatabase
      const { pool } = database
      const me = (yield* PgEventLog).origin
      const { seal, open } = makeCommandSeal(options.token)
      const waiting = new Map<string, Deferred.Deferred<RelayReply, StoreError>>()
      const signals = yield* Queue.unbounded<Signal>()
      let handler: ((command: Schema.Json) => Effect.Effect<RelayReply>) | undefined
      let listener: pg.Client | undefined

      const query = <R extends object>(doing: string, sql: string, values: ReadonlyArray<unknown>) =>
        Effect.tryPromise({
          try: async () => (await pool.query<R>(sql, [...values])).rows,
          catch: storeFailure("write", doing)
        })

      const listen = Effect.tryPromise({
        try: async () => {
          const client = await database.connect()
          client.on("notification", (message) => {
            if (message.channel === COMMANDS_CHANNEL && message.payload === me)
              Queue.offerUnsafe(signals, { take: true })
            if (message.channel === REPLIES_CHANNEL && message.payload !== undefined && waiting.has(message.payload))
              Queue.offerUnsafe(signals, { reply: message.payload })
          })
          client.on("error", () => undefined)
          client.on("end", () => {
            if (listener === client) Queue.offerUnsafe(signals, "reconnect")
          })
          await client.query(`listen ${COMMANDS_CHANNEL}; listen ${REPLIES_CHANNEL}`)
          listener = client
        },
        catch: storeFailure("unavailable", "listen for relayed commands")
      })
      yield* Effect.acquireRelease(listen, () =>
        Effect.promise(async () => {
          const client = listener
          listener = undefined
          await client?.end().catch(() => undefined)
        })
      )

      /** Reads a reply that is there (`done`), deleting its row, and hands it to its waiter. */
      const collect = (commandId: string) =>
        Effect.gen(function* () {
          const rows = yield* query<{ result: string }>(
            "read a relayed command's reply",
            "delete from relayed_commands where command_id = $1 and state = 'done' returning result",
            [commandId]
          )
          const row = rows[0]
          const waiter = waiting.get(commandId)
          if (row === undefined || waiter === undefined) return false
          waiting.delete(commandId)
          const reply: Effect.Effect<RelayReply, StoreError> =
            row.result === UNOPENED
              ? Effect.fail(new StoreError({ reason: new RelayTokenMismatch() }))
              : Effect.try({
                  try: () => decodeReply(open(row.result)),
                  catch: storeFailure("corrupt", "open a relayed command's reply")
                })
          yield* Deferred.complete(waiter, reply)
          return true
        })

      /**
       * Runs one taken command and stores its sealed reply, then tells the requester. A command
       * that does not open (another token) is answered UNOPENED, in clear: it holds nothing.
       */
      const runTaken = (row: { command_id: string; sealed: string }) =>
        Effect.gen(function* () {
          let command: Schema.Json
          try {
            command = JSON.parse(open(row.sealed)) as Schema.Json
          } catch {
            return yield* storeReply(row.command_id, UNOPENED)
          }
          const reply: RelayReply =
            handler === undefined
              ? { ok: false, code: "internal", message: "this replica does not serve relayed commands" }
              : yield* handler(command)
          yield* storeReply(row.command_id, seal(JSON.stringify(reply)))
        })
      const storeReply = (commandId: string, result: string) =>
        query(
          "store a relayed command's reply",
          `with done as (update relayed_commands set state = 'done', result = $2 where command_id = $1 returning command_id)
           select pg_notify('${REPLIES_CHANNEL}', command_id) from done`,
          [commandId, result]
        )

      /** Takes every command sent to this replica that nobody took yet: each exactly once. */
      const take = Effect.gen(function* () {
        const rows = yield* query<{ command_id: string; sealed: string }>(
          "take relayed commands",
          "update relayed_commands set state = 'taken' where owner = $1 and state = 'sent' returning command_id, sealed",
          [me]
        )
        for (const row of rows) yield* Effect.forkDetach(Effect.ignore(runTaken(row)))
      })

      const reconnect = Effect.gen(function* () {
        listener = undefined
        yield* Effect.sleep(RECONNECT_DELAY)
        yield* listen
        yield* Queue.offer(signals, { take: true })
      }).pipe(Effect.catch(() => Queue.offer(signals, "reconnect")))

      const step = Effect.gen(function* () {
        const pending = yield* Queue.takeAll(signals)
        if (pending.includes("reconnect")) return yield* reconnect
        if (pending.some((signal) => signal !== "reconnect" && "take" in signal)) yield* Effect.ignore(take)
        for (const signal of pending)
          if (signal !== "reconnect" && "reply" in signal) yield* Effect.ignore(collect(signal.reply))
      })
      yield* Effect.forkScoped(Effect.forever(step))
      // Missed NOTIFYs (a reconnect, a restart of the owner) are made good by looking again.
      yield* Effect.forkScoped(
        Effect.forever(
          Effect.sleep(Math.max(50, Math.round(options.ttlMs / 3))).pipe(
            Effect.andThen(Queue.offer(signals, { take: true }))
          )
        )
      )

      const ownerLive = (owner: string, threadId: string) =>
        query<{ live: boolean }>(
          "read a lease",
          "select true as live from session_leases where thread_id = $1 and owner = $2 and expires_at > now()",
          [threadId, owner]
        ).pipe(Effect.map((rows) => rows.length > 0))

      const forward: CommandRelay["Service"]["forward"] = (owner, threadId, command) => {
        const commandId = randomUUID()
        return Effect.gen(function* () {
          const reply = yield* Deferred.make<RelayReply, StoreError>()
          waiting.set(commandId, reply)
          yield* query(
            "relay a command",
            `with sent as (
               insert into relayed_commands (command_id, thread_id, owner, requester, state, sealed)
               values ($1, $2, $3, $4, 'sent', $5) returning owner)
             select pg_notify('${COMMANDS_CHANNEL}', owner) from sent`,
            [commandId, threadId, owner, me, seal(JSON.stringify(command))]
          )
          for (;;) {
            const heard = yield* Deferred.await(reply).pipe(Effect.timeoutOption(options.ttlMs))
            if (Option.isSome(heard)) return heard.value
            // A missed reply NOTIFY: the row may be done already.
            if (yield* collect(commandId)) return yield* Deferred.await(reply)
            const withdrawn = yield* query(
              "withdraw a relayed command",
              "delete from relayed_commands where command_id = $1 and state = 'sent' returning command_id",
              [commandId]
            )
            if (withdrawn.length > 0)
              return yield* Effect.fail(
                new StoreError({ reason: new RelayUnreachable({ threadId, boundMs: options.ttlMs }) })
              )
            if (!(yield* ownerLive(owner, threadId))) {
              yield* query("drop a relayed command", "delete from relayed_commands where command_id = $1", [commandId])
              return yield* Effect.fail(new StoreError({ reason: new RelayLost({ threadId }) }))
            }
          }
        }).pipe(Effect.ensuring(Effect.sync(() => waiting.delete(commandId))))
      }

      return CommandRelay.of({
        forward,
        serve: (handle) =>
          Effect.acquireRelease(
            Effect.sync(() => {
              handler = handle
            }).pipe(Effect.andThen(take)),
            () =>
              Effect.sync(() => {
                handler = undefined
              })
          )
      })
    })
  )

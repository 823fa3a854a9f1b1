import { Context, Effect, Layer, Schema } from "effect"
import { promisify } from "node:util"
import { gunzip, gzip } from "node:zlib"
import { describeCause } from "../util/describeCause.ts"
import { Database } from "./Database.ts"
import { prepareNative } from "./NativeStatement.ts"
import { makeCommandSeal } from "./postgres/CommandSeal.ts"
import { providerStateQueries, type ProviderStateRows } from "./ProviderStateQueries.ts"
import * as schema from "./schema.ts"
import { storeError, storeFailure, type StoreError } from "./StoreError.ts"

/**
 * The most a thread's captured provider state may hold: the files' total size before
 * compression. A capture past it is refused (`too_large`) and the previous one is kept. A Codex
 * rollout or a Claude session log grows with the conversation (after one short turn: 53 kB and
 * 179 kB, measured in test/replicas/providerStateResume.real.test.ts); the bound is also
 * what a capture or a restore holds in memory at once.
 */
export const PROVIDER_STATE_MAX_BYTES = 32 * 1024 * 1024

/** One file of a provider home: its path relative to the home (`/`-separated, no `..`), its bytes. */
export interface ProviderStateFile {
  readonly path: string
  readonly content: Uint8Array
}

/** What a thread's provider needs back to resume it, as captured from its home. */
export interface ProviderState {
  readonly provider: string
  readonly files: ReadonlyArray<ProviderStateFile>
}

/**
 * Why a provider state was not stored or cannot be used (a store error; the message names the
 * thread): `too_large` past PROVIDER_STATE_MAX_BYTES (here, and before reading the files:
 * ProviderStateFiles.ts); `corrupt` when the stored one does not open (sealed under another
 * token, altered, or not in the shape it was written in; `unreadable` below).
 */
export const tooLarge = (threadId: string, bytes: number): StoreError =>
  storeError("too_large", {
    message:
      `the provider state of thread '${threadId}' is ${bytes} bytes, past the bound of ` +
      `${PROVIDER_STATE_MAX_BYTES} bytes; it is not stored (a replica without its home cannot resume it)`
  })

/** A relative path that stays inside the home it is written under. */
const RelativePath = Schema.String.check(
  Schema.isPattern(/^(?!\.{1,2}(?:\/|$))[^/\0]+(?:\/(?!\.{1,2}(?:\/|$))[^/\0]+)*$/u, {
    expected: "a relative path inside a provider home"
  })
)
/** The sealed document: the files, their content base64. */
const Sealed = Schema.Struct({
  files: Schema.Array(Schema.Struct({ path: RelativePath, content: Schema.String }))
})
const gzipAsync = promisify(gzip)
const gunzipAsync = promisify(gunzip)
const decodeSealed = Schema.decodeUnknownSync(Schema.fromJsonString(Sealed))

/**
 * A thread's provider state in the store (issue 32), so that a replica whose data dir lacks the
 * thread's provider home can resume it: captured by the session manager after each completed turn
 * and when the session ends or its lease moves, restored before `thread.resume`. Stored gzip'd
 * and sealed (AES-256-GCM) with a key derived from the deployment's token, as relayed commands
 * are (postgres/CommandSeal.ts): the database, its WAL and its backups never hold a
 * conversation in clear.
 */
export class ProviderStates extends Context.Service<
  ProviderStates,
  {
    /** Stores the state (replacing the thread's previous one unless that was captured under a newer `fence`). */
    readonly save: (threadId: string, state: ProviderState, fence: number) => Effect.Effect<void, StoreError>
    /** The thread's stored state, or undefined when none was captured. */
    readonly load: (threadId: string) => Effect.Effect<ProviderState | undefined, StoreError>
  }
>()("planbridge/ProviderStates") {}

/** ProviderStates over an engine's rows, sealing with `token`: the one implementation for both engines. */
export const makeProviderStates = (rows: ProviderStateRows, token: string): ProviderStates["Service"] => {
  const seal = makeCommandSeal(token)
  const unreadable = (threadId: string, cause: unknown) =>
    storeError("corrupt", {
      cause,
      message:
        `the stored provider state of thread '${threadId}' cannot be opened (sealed under another token, ` +
        `or altered): ${describeCause(cause)}`
    })
  return ProviderStates.of({
    save: (threadId, state, fence) =>
      Effect.gen(function* () {
        const bytes = state.files.reduce((total, file) => total + file.content.byteLength, 0)
        if (bytes > PROVIDER_STATE_MAX_BYTES) return yield* Effect.fail(tooLarge(threadId, bytes))
        const document = JSON.stringify({
          files: state.files.map((f) => ({ path: f.path, content: Buffer.from(f.content).toString("base64") }))
        })
        // Off the event loop: a capture runs after every turn and may be megabytes.
        const zipped = yield* Effect.promise(() => gzipAsync(document))
        const sealed = seal.seal(zipped.toString("base64"))
        const values = {
          threadId,
          provider: state.provider,
          sealed,
          bytes,
          fence,
          capturedAt: new Date().toISOString()
        }
        yield* Effect.tryPromise({
          try: () => rows.save(values),
          catch: storeFailure("write", `store the provider state of thread ${threadId}`)
        })
      }),
    load: (threadId) =>
      Effect.gen(function* () {
        const row = yield* Effect.tryPromise({
          try: () => rows.load({ threadId }),
          catch: storeFailure("read", `read the provider state of thread ${threadId}`)
        })
        if (row === undefined) return undefined
        const files = yield* Effect.tryPromise({
          try: async () =>
            decodeSealed((await gunzipAsync(Buffer.from(seal.open(row.sealed), "base64"))).toString("utf8")).files,
          catch: (cause) => unreadable(threadId, cause)
        })
        return {
          provider: row.provider,
          files: files.map((f) => ({ path: f.path, content: Buffer.from(f.content, "base64") }))
        }
      })
  })
}

/**
 * ProviderStates on SQLite (the statements prepared on its connection). Not part of the SQLite
 * store: one server keeps its homes in the same data dir as its database, so a copy in the
 * database would be written after every turn and never read. It exists so that the one
 * implementation is tested on both engines.
 */
export const sqliteProviderStates = (token: string) =>
  Layer.effect(
    ProviderStates,
    Effect.gen(function* () {
      const { db } = yield* Database
      const queries = providerStateQueries(db, schema.providerStates)
      const save = prepareNative(db.$client, queries.save)
      const load = prepareNative(db.$client, queries.load)
      return makeProviderStates(
        {
          save: async (values) => void save.run(values),
          load: async (values) => load.get(values)
        },
        token
      )
    })
  )

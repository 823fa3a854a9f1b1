import { Context, Effect, Layer } from "effect"
import BetterSqlite3 from "better-sqlite3"
import { describe, expect, it } from "vitest"
import { postgresStore } from "../../src/persistence/postgres/PgStore.ts"
import { PROVIDER_STATE_MAX_BYTES, ProviderStates, type ProviderState } from "../../src/persistence/ProviderStates.ts"
import { Database } from "../../src/persistence/Database.ts"
import { sqliteProviderStates } from "../../src/persistence/ProviderStates.ts"
import { sqliteStoreServices } from "../../src/persistence/SqliteStore.ts"
import { tempDir } from "../support/ingestionRuntime.ts"
import { ENGINES, freshStore, type EngineName } from "../support/storeEngines.ts"

/**
 * A thread's provider state in the store (issue 32), on both engines: stored sealed with the
 * token (nothing of it in clear in the row), bounded (a clear `too_large` past the bound, the
 * previous capture kept), refused as `unreadable` when sealed under another token or altered,
 * and never replaced by a capture taken under an older lease.
 */
const TOKEN = "provider-state-token-".padEnd(40, "p")
const SECRET_LINE = '{"type":"message","text":"the earlier conversation, kept sealed"}\n'
const state = (text: string): ProviderState => ({
  provider: "codex",
  files: [
    { path: "sessions/2026/12/06/rollout-2026-12-06T21-00-00-abc.jsonl", content: Buffer.from(text) },
    { path: "sessions/2026/12/06/empty.jsonl", content: new Uint8Array() }
  ]
})

/** The engine's store opened with `token`, and raw SQL on it. */
const storeOf = async (engine: EngineName) => {
  if (engine === "sqlite") {
    const t = tempDir("provider-states")
    const filename = `${t.dir}/planbridge.db`
    return {
      // Not in the SQLite store (see sqliteProviderStates): the same implementation on its rows.
      layer: (token: string) =>
        Layer.merge(sqliteStoreServices, sqliteProviderStates(token)).pipe(Layer.provide(Database.layer({ filename }))),
      query: <R>(sql: string, params: ReadonlyArray<unknown> = []): Array<R> => {
        const db = new BetterSqlite3(filename)
        try {
          const statement = db.prepare(sql)
          if (statement.reader) return statement.all(...params) as Array<R>
          statement.run(...params)
          return []
        } finally {
          db.close()
        }
      },
      cleanup: t.cleanup
    }
  }
  const store = await freshStore("postgres")
  return {
    layer: (token: string) => postgresStore({ url: store.storeUrl!, replica: { token, leaseTtlMs: 60_000 } }),
    query: <R>(sql: string, params: ReadonlyArray<unknown> = []) => store.query<R>(sql, params),
    cleanup: () => undefined
  }
}

/** Runs `f` on the ProviderStates of a store opened with the layer (opened and closed around it). */
const run = <A, E>(layer: Layer.Layer<never, unknown>, f: (states: ProviderStates["Service"]) => Effect.Effect<A, E>) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const context = yield* Layer.build(layer)
        return yield* f(Context.get(context as Context.Context<ProviderStates>, ProviderStates))
      })
    )
  )
const text = (s: ProviderState | undefined) => Buffer.from(s!.files[0]!.content).toString("utf8")

describe.each(ENGINES)("provider states on %s", (engine) => {
  it("round trip, sealed at rest; the bound; another token and an altered row are typed errors", async () => {
    const store = await storeOf(engine)
    try {
      await run(store.layer(TOKEN), (s) => s.save("thr-1", state(SECRET_LINE), 1))
      const loaded = await run(store.layer(TOKEN), (s) => s.load("thr-1"))
      expect(text(loaded)).toBe(SECRET_LINE)
      expect(loaded!.files.map((f) => f.path)).toEqual(state("").files.map((f) => f.path))
      expect(loaded!.files[1]!.content.byteLength).toBe(0)
      expect(await run(store.layer(TOKEN), (s) => s.load("thr-none"))).toBeUndefined()
      // Nothing of the conversation in the row, in clear or as base64.
      const [row] = await store.query<{ sealed: string; bytes: number }>(
        "select sealed, bytes from provider_states where thread_id = ?",
        ["thr-1"]
      )
      expect(row!.bytes).toBe(Buffer.byteLength(SECRET_LINE))
      for (const clear of ["earlier conversation", Buffer.from(SECRET_LINE).toString("base64").slice(0, 24)])
        expect(row!.sealed).not.toContain(clear)

      // Past the bound: refused with its size and the bound, the previous capture kept.
      const big = "x".repeat(PROVIDER_STATE_MAX_BYTES + 1)
      const tooLarge = await run(store.layer(TOKEN), (s) => Effect.flip(s.save("thr-1", state(big), 2)))
      expect(tooLarge).toMatchObject({ _tag: "StoreError", reason: { _tag: "StoreTooLarge" } })
      expect(tooLarge.message).toContain(`${PROVIDER_STATE_MAX_BYTES} bytes`)
      expect(text(await run(store.layer(TOKEN), (s) => s.load("thr-1")))).toBe(SECRET_LINE)

      // Under an older lease a capture does not replace the newer one; under a newer one it does.
      await run(store.layer(TOKEN), (s) => s.save("thr-1", state("older lease"), 0))
      expect(text(await run(store.layer(TOKEN), (s) => s.load("thr-1")))).toBe(SECRET_LINE)
      await run(store.layer(TOKEN), (s) => s.save("thr-1", state("newer lease"), 3))
      expect(text(await run(store.layer(TOKEN), (s) => s.load("thr-1")))).toBe("newer lease")

      // Another deployment's token: a typed error, not a crash.
      const otherToken = await run(store.layer("another-token-".padEnd(40, "q")), (s) => Effect.flip(s.load("thr-1")))
      expect(otherToken).toMatchObject({ _tag: "StoreError", reason: { _tag: "StoreCorrupt" } })
      expect(otherToken.message).toContain("thr-1")

      // One character of the sealed text altered: refused the same way.
      const [{ sealed }] = (await store.query<{ sealed: string }>(
        "select sealed from provider_states where thread_id = ?",
        ["thr-1"]
      )) as [{ sealed: string }]
      const at = 40
      const altered = sealed.slice(0, at) + (sealed[at] === "A" ? "B" : "A") + sealed.slice(at + 1)
      await store.query("update provider_states set sealed = ? where thread_id = ?", [altered, "thr-1"])
      const tampered = await run(store.layer(TOKEN), (s) => Effect.flip(s.load("thr-1")))
      expect(tampered).toMatchObject({ _tag: "StoreError", reason: { _tag: "StoreCorrupt" } })
    } finally {
      store.cleanup()
    }
  }, 120_000)
})

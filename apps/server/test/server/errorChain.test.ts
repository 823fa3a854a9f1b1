import type { ThreadId } from "@planbridge/contracts"
import BetterSqlite3 from "better-sqlite3"
import { Cause, Effect } from "effect"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { CommandError, providerRefused } from "../../src/orchestration/CommandErrors.ts"
import { IngestionError } from "../../src/orchestration/IngestionError.ts"
import { RuntimeIngestion } from "../../src/orchestration/RuntimeIngestion.ts"
import { Database } from "../../src/persistence/Database.ts"
import { StoreError } from "../../src/persistence/StoreError.ts"
import { AdapterError, adapterError, EmitError } from "../../src/provider/AdapterError.ts"
import { rawOf } from "../../src/provider/kernel/EventDraft.ts"
import { makeSessionRunner } from "../../src/provider/kernel/SessionRunner.ts"
import { wireFailureOf } from "../../src/server/WireErrors.ts"
import { runWithIngestion, tempDir } from "../support/ingestionRuntime.ts"

/**
 * One error algebra (issue 26): a failed append keeps its driver error as the `cause` of every
 * error on its way to a client (store → ingestion → emit → adapter → command), the wire text is
 * made once from the reason (WireErrors.ts), and the logged Cause holds the driver's error.
 */
describe("the error chain from a failed append to the client", () => {
  const temp = tempDir("error-chain")
  afterEach(() => temp.cleanup())

  it("keeps the SQLite driver's error object as the cause down to the CommandError, and logs it", async () => {
    const outcome = await runWithIngestion(
      join(temp.dir, "chain.db"),
      Effect.gen(function* () {
        const { sqlite } = yield* Database
        // A real driver failure on the append's own INSERT (the trigger aborts it).
        sqlite.exec(
          "create trigger refuse_append before insert on events begin select raise(abort, 'disk full (test)'); end"
        )
        const ingestion = yield* RuntimeIngestion
        const runner = yield* makeSessionRunner<number, number, string>({
          provider: "cursor",
          threadId: "thread-chain" as ThreadId,
          initial: 0,
          step: (state) => ({
            state: state + 1,
            drafts: [
              {
                type: "content.delta",
                turnId: "turn-1" as never,
                itemId: "item-1" as never,
                payload: { streamKind: "assistant_text", delta: "hello" },
                raw: rawOf("fake", "delta", {})
              }
            ],
            replies: []
          }),
          eventId: () => `e-${Math.random().toString(36).slice(2)}`,
          // As LiveSessions.ts does: the ingestion error is the emit error's cause.
          emit: (event) => Effect.mapError(ingestion.ingest(event), (cause) => new EmitError({ cause })),
          write: () => Effect.void
        })
        return yield* Effect.flip(runner.apply(1, { strict: true }))
      })
    )
    expect(outcome).toBeInstanceOf(AdapterError)
    const commandError = providerRefused(outcome)

    // Every link is the error object of the layer below, not its message.
    expect(commandError).toBeInstanceOf(CommandError)
    expect(commandError.reason._tag).toBe("ProviderRefused")
    expect(commandError.reason.cause).toBe(outcome)
    const adapter = outcome
    expect(adapter.reason._tag).toBe("ProtocolFailure")
    const emit = adapter.reason.cause
    expect(emit).toBeInstanceOf(EmitError)
    const ingestionError = (emit as EmitError).cause
    expect(ingestionError).toBeInstanceOf(IngestionError)
    const refused = (ingestionError as IngestionError).reason
    expect(refused._tag).toBe("StoreRefused")
    const store = refused.cause
    expect(store).toBeInstanceOf(StoreError)
    expect((store as StoreError).reason._tag).toBe("StoreWriteFailed")
    const driver = (store as StoreError).reason.cause
    expect(driver).toBeInstanceOf(BetterSqlite3.SqliteError)
    expect(driver).toMatchObject({ code: "SQLITE_CONSTRAINT_TRIGGER", message: "disk full (test)" })

    // The wire text is the one clients got before; the log has the whole chain.
    const failure = wireFailureOf(Cause.fail(commandError), "command")
    expect(failure.error).toEqual({
      code: "provider_error",
      message: "protocol: could not record content.delta; nothing was sent"
    })
    expect(failure.unexpected).toContain("SqliteError: disk full (test)")
    expect(failure.unexpected).toContain("cannot append events: disk full (test)")
  })

  it("a client's refusal is told as it was and not logged", () => {
    const failure = wireFailureOf(
      Cause.fail(providerRefused(adapterError("busy", "turn t1 is already running"))),
      "command"
    )
    expect(failure).toEqual({ error: { code: "busy", message: "turn t1 is already running" } })
  })
})

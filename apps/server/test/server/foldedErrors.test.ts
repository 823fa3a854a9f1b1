import { Cause, Effect } from "effect"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { commandError, CommandError, providerRefused, relayFailed } from "../../src/orchestration/CommandErrors.ts"
import { SessionHomes } from "../../src/orchestration/SessionHomes.ts"
import { PromptNotFound, RelayLost, RelayUnreachable, StoreError } from "../../src/persistence/StoreError.ts"
import { AdapterError } from "../../src/provider/AdapterError.ts"
import { acquireProviderProcess } from "../../src/provider/kernel/ProviderProcess.ts"
import { wireFailureOf } from "../../src/server/WireErrors.ts"
import { tempDir } from "../support/ingestionRuntime.ts"

/**
 * Classes that stood alone before (issue 26) are reasons of their layer's umbrella now: what
 * failed below stays their `cause`, as the same object, up to the one place that makes wire text
 * (WireErrors.ts), and the words clients read are the ones they read before.
 */
describe("folded errors reach the wire with their cause", () => {
  const temp = tempDir("folded-errors")
  afterEach(() => temp.cleanup())

  it("a thread directory that cannot be made: a store error whose cause is the fs error, logged whole", async () => {
    // A file where the homes directory should be: mkdir fails with EEXIST.
    writeFileSync(join(temp.dir, "homes"), "not a directory")
    const failed = await Effect.runPromise(
      Effect.gen(function* () {
        const homes = yield* SessionHomes
        return yield* Effect.flip(homes.prepare(homes.dirFor("t1")))
      }).pipe(Effect.provide(SessionHomes.layer(temp.dir)))
    )
    expect(failed).toBeInstanceOf(StoreError)
    expect(failed.reason._tag).toBe("StoreWriteFailed")
    const fsError = failed.reason._tag === "StoreWriteFailed" ? failed.reason.cause : undefined
    expect(fsError).toMatchObject({ code: "EEXIST" })
    expect(failed.message).toBe(`cannot create ${join(temp.dir, "homes", "t1")}: ${(fsError as Error).message}`)

    // As SessionManager.ts refuses the start: the store error itself is the refusal's cause.
    const refusal = commandError("provider_error", `cannot start a codex session: ${failed.message}`, undefined, {
      cause: failed
    })
    expect(refusal.reason._tag === "CommandRefused" && refusal.reason.cause).toBe(failed)
    const wire = wireFailureOf(Cause.fail(refusal), "command")
    expect(wire.error).toEqual({ code: "provider_error", message: refusal.message })
    expect(wire.unexpected).toContain("EEXIST")
    expect(wire.unexpected).toContain("StoreWriteFailed")
  })

  it("a provider that cannot be spawned: an AdapterError start_failed, its cause kept under the command error", async () => {
    // No process group is recorded: ProcessGroups defaults to `unrecorded` outside a server.
    const failed = await Effect.runPromise(
      Effect.scoped(
        Effect.flip(
          acquireProviderProcess({
            command: "no-such-provider-binary",
            args: [],
            env: process.env,
            cwd: "/",
            stderrLimit: 1000
          })
        )
      )
    )
    expect(failed).toBeInstanceOf(AdapterError)
    expect(failed).toMatchObject({
      kind: "start_failed",
      message: "cannot start no-such-provider-binary: spawn no-such-provider-binary ENOENT"
    })
    // What the guard found (no such program) is the reason's cause, as an object.
    expect(failed.reason.cause).toBeInstanceOf(AdapterError)
    const command = providerRefused(failed)
    expect(command.reason._tag === "ProviderRefused" && command.reason.cause).toBe(failed)
    const wire = wireFailureOf(Cause.fail(command), "command")
    expect(wire.error).toEqual({
      code: "provider_error",
      message: "start_failed: cannot start no-such-provider-binary: spawn no-such-provider-binary ENOENT"
    })
    expect(wire.unexpected).toContain("spawn no-such-provider-binary ENOENT")
  })

  it("a relayed command without a reply: session_not_live in WireErrors' words, the store error kept as cause", () => {
    const unreachable = new StoreError({ reason: new RelayUnreachable({ threadId: "t1", boundMs: 1500 }) })
    const command = relayFailed(unreachable)
    expect(command).toBeInstanceOf(CommandError)
    expect(command.reason._tag === "RelayFailed" && command.reason.cause).toBe(unreachable)
    expect(wireFailureOf(Cause.fail(command), "command")).toEqual({
      error: {
        code: "session_not_live",
        message:
          "the replica that owns thread t1 did not take the command within 1500 ms; it was withdrawn and did not run"
      }
    })
    const lost = wireFailureOf(
      Cause.fail(relayFailed(new StoreError({ reason: new RelayLost({ threadId: "t2" }) }))),
      "command"
    )
    expect(lost.error).toEqual({
      code: "session_not_live",
      message: "the replica that owned thread t2 lost its lease while running the command; whether it ran is unknown"
    })
  })

  it("an unknown prompt: a store error's reason, told as unknown_prompt", () => {
    const missing = new StoreError({
      reason: new PromptNotFound({ promptId: "p9", message: "no prompt with id 'p9'" })
    })
    expect(wireFailureOf(Cause.fail(missing), "request")).toEqual({
      error: { code: "unknown_prompt", message: "no prompt with id 'p9'" }
    })
  })
})

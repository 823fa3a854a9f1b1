import { ThreadId, type RuntimeEvent } from "@planbridge/contracts"
import { Effect, Fiber } from "effect"
import { describe, expect, it } from "vitest"
import { approvalDecision } from "../../../src/provider/claude/ClaudeDecisions.ts"
import { makeClaudeSessionCore } from "../../../src/provider/claude/ClaudeSessionCore.ts"
import { AdapterError, EmitError } from "../../../src/provider/ProviderAdapter.ts"

/**
 * Claude's callbacks on the session runner, without the SDK: a `canUseTool` call awaits its
 * receipt, and only a decision whose events were recorded reaches it. A decision that could not
 * be recorded leaves the request open; whatever closes it later (here the CLI's exit) is what
 * the callback gets, never the unrecorded decision.
 */
const TOOL_USE = "toolu_core_1"

const rig = Effect.gen(function* () {
  const events: Array<RuntimeEvent> = []
  let refuse: ((event: RuntimeEvent) => boolean) | undefined
  const core = yield* makeClaudeSessionCore({
    input: {
      threadId: ThreadId.make("thread-claude-core"),
      cwd: "/nonexistent",
      mode: "default",
      emit: (event) =>
        refuse?.(event) === true
          ? Effect.fail(new EmitError({ cause: new Error("disk full (test)") }))
          : Effect.sync(() => void events.push(event))
    },
    startedAt: Date.now(),
    transcript: undefined,
    run: (effect) => Effect.runPromise(effect)
  })
  const call = core.local({
    kind: "canUseTool",
    toolName: "Bash",
    input: { command: "echo hi" },
    options: { toolUseID: TOOL_USE }
  })
  // The callback, waiting on its receipt; its request is open once the call is mapped.
  const callback = yield* Effect.forkChild(core.awaitReceipt(TOOL_USE, call, new AbortController().signal, Effect.void))
  const request = yield* Effect.gen(function* () {
    for (;;) {
      const open = (yield* core.state).requests.get(TOOL_USE)
      if (open !== undefined) return open
      yield* Effect.yieldNow
    }
  })
  const refuseNext = (predicate: (event: RuntimeEvent) => boolean) => (refuse = predicate)
  return { core, events, callback, request, refuseNext }
})

describe("Claude's session core: callbacks on the runner", () => {
  it("hands a callback our decision once its events are recorded", async () => {
    const native = await Effect.runPromise(
      Effect.gen(function* () {
        const { core, callback, request } = yield* rig
        yield* core.decide(request, approvalDecision("allow"))
        return yield* Fiber.join(callback)
      })
    )
    expect(native).toEqual({ behavior: "allow", patch: {} })
  })

  it("never hands a callback a decision that could not be recorded", async () => {
    const { refused, native, resolutions } = await Effect.runPromise(
      Effect.gen(function* () {
        const { core, events, callback, request, refuseNext } = yield* rig
        refuseNext((e) => e.type === "request.resolved")
        const refused = yield* Effect.flip(core.decide(request, approvalDecision("allow")))
        refuseNext(() => false)
        expect((yield* core.state).requests.has(TOOL_USE)).toBe(true)
        yield* core.record(core.local({ kind: "exit", exitKind: "crashed", exitCode: 1, signal: null }))
        const native = yield* Fiber.join(callback)
        const resolutions = events.flatMap((e) => (e.type === "request.resolved" ? [e.payload.resolution] : []))
        return { refused, native, resolutions }
      })
    )
    expect(refused).toBeInstanceOf(AdapterError)
    expect(native).toEqual({ behavior: "deny", message: "The Claude Code process exited." })
    expect(resolutions).toEqual(["provider_exited"])
  })
})

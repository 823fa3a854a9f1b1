import type { OptionId, PromptId, QuestionId } from "@planbridge/contracts"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { assertLoopbackOnly } from "../../support/loopbackOnly.ts"
import { lastUserText, startMockResponsesModel } from "../../support/mockResponsesModel.ts"
import { withCodexHarness } from "./harness.ts"
import { askTwoQuestions, expectAdapterError, ofType } from "./realPeerSupport.ts"

/**
 * How a Codex session ends or misbehaves, against the real app-server 0.171.0 (the malformed
 * line needs a stand-in provider): interrupt with a question pending, the process killed, a
 * line on stdout that is not JSON-RPC.
 */

beforeAll(() => assertLoopbackOnly())
const fakeServer = fileURLToPath(new URL("./fakeAppServer.mjs", import.meta.url))
const started = Date.now()
afterAll(() => {
  console.info(`codexLifecycle.real.test.ts wall time: ${Date.now() - started} ms`)
})

describe("Codex session lifecycle on the real app-server", () => {
  it("interrupt while a question is pending cancels the prompt; a late answer is refused and not sent", async () => {
    await withCodexHarness({ mode: "plan" }, (h) =>
      Effect.gen(function* () {
        h.mock.script({ output: [askTwoQuestions] })
        const turnId = yield* h.session.startTurn({ text: "Plan something." })
        const requested = yield* h.waitForEvent("user-input.requested")
        const opened = yield* h.waitForEvent("request.opened")
        const promptId = requested.payload.prompt.promptId
        yield* Effect.promise(() => expectAdapterError(h.session.startTurn({ text: "Another thing" }), "busy"))

        yield* h.session.interrupt()
        const completed = yield* h.waitForEvent("turn.completed")
        expect(completed.payload.status).toBe("interrupted")
        const resolved = yield* h.waitForEvent("user-input.resolved")
        expect(resolved.payload).toMatchObject({ promptId, resolution: "cancelled", answers: [] })
        const request = yield* h.waitForEvent("request.resolved")
        expect(request.payload.resolution).toBe("cancelled")
        expect(h.events.indexOf(resolved)).toBeLessThan(h.events.indexOf(completed))

        const wireBefore = h.traffic.length
        yield* Effect.promise(() =>
          expectAdapterError(
            h.session.respondToUserInput({
              promptId,
              answers: [{ questionId: "db_choice" as QuestionId, selectedOptionIds: ["opt-0" as OptionId] }]
            }),
            "prompt_not_pending"
          )
        )
        const sent = h.traffic.slice(wireBefore).filter((t) => t.entry.dir === "out")
        expect(sent).toEqual([])
        const answersOnWire = h.traffic.filter(
          (t) =>
            t.entry.dir === "out" &&
            "msg" in t.entry &&
            (t.entry.msg as { id?: unknown }).id === opened.payload.native.id
        )
        expect(answersOnWire).toEqual([])
        expect(ofType(h.events, "user-input.resolved")).toHaveLength(1)
        expect(h.mock.responseRequests()).toHaveLength(1)

        // The session is still usable: the next turn starts.
        h.mock.script({ output: [{ type: "text", text: "Fine." }] })
        const next = yield* h.session.startTurn({ text: "Go on.", mode: "default" })
        expect(next).not.toBe(turnId)
        yield* h.waitForEvent("turn.completed", (e) => e.turnId === next)
        expect(ofType(h.events, "mode.changed").map((e) => e.payload)).toEqual([
          { mode: "default", nativeMode: "default" }
        ])
      })
    )
  })

  it("killing the app-server while a question is pending: session.exited and the prompt ends provider_exited", async () => {
    await withCodexHarness({ mode: "plan" }, (h) =>
      Effect.gen(function* () {
        h.mock.script({ output: [askTwoQuestions] })
        yield* h.session.startTurn({ text: "Plan something." })
        const requested = yield* h.waitForEvent("user-input.requested")
        process.kill(-h.session.pid, "SIGKILL")
        const exited = yield* h.waitForEvent("session.exited")
        expect(exited.payload).toMatchObject({ exitKind: "killed", signal: "SIGKILL" })
        const resolved = ofType(h.events, "user-input.resolved")
        expect(resolved.map((e) => e.payload)).toEqual([
          {
            promptId: requested.payload.prompt.promptId,
            resolution: "provider_exited",
            answers: [],
            reason: "the provider process exited"
          }
        ])
        expect(ofType(h.events, "request.resolved").map((e) => e.payload.resolution)).toEqual(["provider_exited"])
        expect(ofType(h.events, "turn.completed").map((e) => e.payload.status)).toEqual(["failed"])
        yield* Effect.promise(() =>
          expectAdapterError(
            h.session.respondToUserInput({
              promptId: requested.payload.prompt.promptId as PromptId,
              answers: [{ questionId: "db_choice" as QuestionId, selectedOptionIds: ["opt-0" as OptionId] }]
            }),
            "prompt_not_pending"
          )
        )
        yield* Effect.promise(() => expectAdapterError(h.session.startTurn({ text: "hello?" }), "provider_exited"))
      })
    )
  })

  it("a line on the provider's stdout that is not JSON-RPC becomes runtime.warning; the session keeps working", async () => {
    await withCodexHarness({ adapter: { command: { command: process.execPath, args: [fakeServer] } } }, (h) =>
      Effect.gen(function* () {
        const turnId = yield* h.session.startTurn({ text: "Still there?" })
        const completed = yield* h.waitForEvent("turn.completed")
        expect(completed.turnId).toBe(turnId)
        const warnings = ofType(h.events, "runtime.warning").filter((e) => e.payload.code === "codex.invalid_line")
        expect(warnings.map((e) => e.raw?.payload)).toEqual([
          "this is not JSON {",
          '{"hello":"valid JSON, but not JSON-RPC"}',
          "\u0000\u0001 binary noise mid-turn"
        ])
        expect(ofType(h.events, "item.completed").map((e) => e.payload.text)).toEqual(["still here"])
        expect(ofType(h.events, "session.exited")).toEqual([])
      })
    )
  })

  it("a secret answer reaches the provider in clear and nowhere else (events, raw payloads, recorded wire)", async () => {
    await withCodexHarness(
      { mode: "plan", adapter: { command: { command: process.execPath, args: [fakeServer] } } },
      (h) =>
        Effect.gen(function* () {
          yield* h.session.startTurn({ text: "[[SECRET]] deploy" })
          const requested = yield* h.waitForEvent("user-input.requested")
          expect(requested.payload.prompt.questions[0]).toMatchObject({
            id: "token",
            secret: true,
            allowFreeform: true,
            options: []
          })
          yield* h.session.respondToUserInput({
            promptId: requested.payload.prompt.promptId,
            answers: [{ questionId: "token" as QuestionId, text: "tok-123-secret" }]
          })
          const echoed = yield* h.waitForEvent("item.completed", (e) => e.payload.itemType === "assistant_message")
          // The stand-in echoes what it received: the clear value did reach the provider.
          expect(echoed.payload.text).toBe('received {"answers":{"token":{"answers":["user_note: tok-123-secret"]}}}')
          const mine = h.events.filter(
            (e) => e !== echoed && !(e.type === "content.delta" || e.type === "item.started")
          )
          expect(JSON.stringify(mine)).not.toContain("tok-123")
          expect(JSON.stringify(h.traffic.filter((t) => t.entry.dir === "out"))).not.toContain("tok-123")
          expect(ofType(h.events, "user-input.resolved").map((e) => e.payload.answers)).toEqual([
            [{ questionId: "token", redacted: true }]
          ])
        })
    )
  })

  it("a non-ephemeral thread is resumed by a new app-server process with its history", async () => {
    const home = await mkdtemp(join(tmpdir(), "planbridge-codex-home-"))
    try {
      const mock = await startMockResponsesModel()
      try {
        mock.script(
          { output: [{ type: "text", text: "Noted: 42." }] },
          { output: [{ type: "text", text: "You said 42." }] }
        )
        const nativeThreadId = await withCodexHarness({ mock, adapter: { codexHome: home, ephemeral: false } }, (h) =>
          Effect.gen(function* () {
            yield* h.session.startTurn({ text: "Remember 42." })
            yield* h.waitForEvent("turn.completed")
            return h.session.nativeThreadId
          })
        )
        await withCodexHarness({ mock, adapter: { codexHome: home, resumeNativeThreadId: nativeThreadId } }, (h) =>
          Effect.gen(function* () {
            const started = yield* h.waitForEvent("session.started")
            expect(started.payload).toMatchObject({ resumed: true, nativeThreadId })
            yield* h.session.startTurn({ text: "What did I say?" })
            yield* h.waitForEvent("turn.completed")
            const [, second] = mock.responseRequests()
            expect(second !== undefined && lastUserText(second)).toBe("What did I say?")
            expect(JSON.stringify(second?.body.input)).toContain("Remember 42.")
            expect(ofType(h.events, "runtime.warning").map((e) => e.payload.code)).toEqual(["codex.config_warning"])
          })
        )
      } finally {
        await mock.close()
      }
    } finally {
      await rm(home, { recursive: true, force: true })
    }
  })
})

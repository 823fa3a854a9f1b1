import { urlPrompt, type PlanId, type PromptId, type RequestId } from "@planbridge/contracts"
import { Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import {
  awaitingInTurn,
  blockingPrompt,
  isKnown,
  modeSwitchRefusal,
  noOpenRequests,
  openPlan,
  openPrompt,
  openRequest,
  pendingPlan,
  pendingPrompt,
  pendingRequest,
  stillAwaiting,
  turnStartRefusal,
  withAnswered,
  withClosed,
  withOpened,
  type OpenRequest,
  type OpenRequests
} from "../../../src/provider/kernel/OpenRequests.ts"
import type { AdapterError } from "../../../src/provider/ProviderAdapter.ts"

/** The one pending-request module: the rules every provider's answers and turns go through. */

interface Native extends OpenRequest {
  readonly nativeId: number
}

const question = (key: string, turnId: string, blocking: boolean): Native => ({
  key,
  nativeId: Number(key),
  kind: "prompt",
  requestId: `request-${key}` as RequestId,
  promptId: `prompt-${key}` as PromptId,
  prompt: urlPrompt({ promptId: `prompt-${key}` as PromptId, message: "Sign in", url: { url: "https://example.com" } }),
  turnId,
  blocking,
  answered: false
})
const approval: Native = {
  key: "3",
  nativeId: 3,
  kind: "approval",
  requestId: "request-3" as RequestId,
  turnId: "t2",
  blocking: false,
  answered: false
}
const plan: Native = {
  key: "4",
  nativeId: 4,
  kind: "plan",
  requestId: "request-4" as RequestId,
  planId: "plan-4" as PlanId,
  turnId: "t1",
  blocking: false,
  answered: false
}

const opened = (...requests: ReadonlyArray<Native>): OpenRequests<Native> =>
  requests.reduce((all, r) => withOpened(all, r), noOpenRequests<Native>())

const failure = <A>(effect: Effect.Effect<A, AdapterError>): AdapterError => {
  const exit = Effect.runSyncExit(effect)
  if (Exit.isSuccess(exit)) throw new Error("expected a refusal")
  const error = exit.cause.reasons[0]
  if (error === undefined || error._tag !== "Fail") throw new Error("expected a failure")
  return error.error
}

describe("kernel OpenRequests", () => {
  it("is immutable: opening, answering and closing return new maps and leave the old ones alone", () => {
    const before = opened(question("1", "t1", true))
    const answered = withAnswered(before, "1", { nativeId: 11 })
    const closed = withClosed(answered, "1")
    expect(before.get("1")?.answered).toBe(false)
    expect(answered.get("1")).toMatchObject({ answered: true, nativeId: 11 })
    expect(closed.size).toBe(0)
    expect(answered.size).toBe(1)
    expect(withAnswered(before, "nope")).toBe(before)
    expect(withClosed(before, "nope")).toBe(before)
  })

  it("finds a request only while it awaits us, by prompt, request or plan id", () => {
    const all = opened(question("1", "t1", false), approval, plan)
    expect(openPrompt(all, "prompt-1" as PromptId)?.nativeId).toBe(1)
    expect(openRequest(all, "request-3" as RequestId)?.nativeId).toBe(3)
    expect(openPlan(all, "plan-4" as PlanId)?.nativeId).toBe(4)
    // A plan id is not a prompt id, nor is an approval a plan.
    expect(openPrompt(all, "plan-4" as unknown as PromptId)).toBeUndefined()
    const answered = withAnswered(withAnswered(withAnswered(all, "1"), "3"), "4")
    expect(openPrompt(answered, "prompt-1" as PromptId)).toBeUndefined()
    expect(openRequest(answered, "request-3" as RequestId)).toBeUndefined()
    expect(openPlan(answered, "plan-4" as PlanId)).toBeUndefined()
    expect(isKnown(answered, "1")).toBe(true)
  })

  it("a question is found only with its prompt: answers and dismissals are built from it", () => {
    const { prompt: _prompt, ...withoutPrompt } = question("5", "t1", false)
    expect(openPrompt(opened(withoutPrompt), "prompt-5" as PromptId)).toBeUndefined()
    expect(openPrompt(opened(question("5", "t1", false)), "prompt-5" as PromptId)?.prompt.promptId).toBe("prompt-5")
  })

  it("refuses with the one wording and reason for each kind", () => {
    const none = noOpenRequests<Native>()
    expect(failure(pendingPrompt(none, "p" as PromptId))).toMatchObject({
      kind: "prompt_not_pending",
      message: "prompt p is not pending"
    })
    expect(failure(pendingRequest(none, "r" as RequestId))).toMatchObject({
      kind: "request_not_pending",
      message: "request r is not pending"
    })
    expect(failure(pendingPlan(none, "x" as PlanId))).toMatchObject({
      kind: "request_not_pending",
      message: "plan x is not awaiting a decision"
    })
    const all = opened(question("1", "t1", false))
    expect(Effect.runSync(pendingPrompt(all, "prompt-1" as PromptId)).key).toBe("1")
  })

  it("re-checks under the lock: a request answered or ended since the look-up is refused in its own terms", () => {
    const q = question("1", "t1", false)
    const all = opened(q, approval, plan)
    expect(stillAwaiting(all, q)).toBeUndefined()
    expect(stillAwaiting(withAnswered(all, "1"), q)?.kind).toBe("prompt_not_pending")
    expect(stillAwaiting(withClosed(all, "3"), approval)?.message).toBe("request request-3 is not pending")
    expect(stillAwaiting(withClosed(all, "4"), plan)?.message).toBe("plan plan-4 is not awaiting a decision")
  })

  it("a turn that ends cancels only what it asked that still awaits us", () => {
    const all = withAnswered(opened(question("1", "t1", false), question("2", "t1", true), approval, plan), "1")
    expect(awaitingInTurn(all, "t1").map((r) => r.key)).toEqual(["2", "4"])
    expect(awaitingInTurn(all, "t2").map((r) => r.key)).toEqual(["3"])
  })

  it("busy: a blocking question refuses a new turn; a running turn only where the provider cannot steer", () => {
    const nonBlocking = opened(question("1", "t1", false))
    expect(turnStartRefusal(nonBlocking, "t1", true)).toBeUndefined()
    expect(turnStartRefusal(nonBlocking, "t1", false)).toMatchObject({
      kind: "busy",
      message: "turn t1 is already running"
    })
    const blocking = opened(question("2", "t1", true))
    expect(blockingPrompt(blocking)?.key).toBe("2")
    expect(turnStartRefusal(blocking, undefined, true)).toMatchObject({
      kind: "busy",
      message: "a blocking question (prompt-2) is pending; answer or dismiss it first"
    })
    // Answered, it blocks nothing any more.
    expect(turnStartRefusal(withAnswered(blocking, "2"), undefined, false)).toBeUndefined()
  })

  it("busy: a mode switch while a turn runs, unless it is the mode in effect", () => {
    expect(modeSwitchRefusal(undefined, "plan", "default")).toBeUndefined()
    expect(modeSwitchRefusal("t1", "plan", "plan")).toBeUndefined()
    expect(modeSwitchRefusal("t1", "plan", "default")).toMatchObject({
      kind: "busy",
      message: "turn t1 is running in 'plan' mode; switch after it ends"
    })
  })
})

import { Schema } from "effect"

/**
 * What the server does with a question nobody answers (issue 29): `wait` (the default) leaves it
 * waiting for a person however long; `after` resolves it once `afterMs` have passed since it was
 * asked, `then` one of `empty` (resolved without an answer), `recommended` (each question's
 * recommended option; a question without one makes it `empty`) or `cancel`. The resolution
 * records `resolvedBy.actor: policy`. A secret question is never answered by a policy with
 * anything but `empty`. The server keeps the timer, not a client.
 */
export const WAIT_POLICY_BOUNDS = { minMs: 100, maxMs: 7 * 24 * 60 * 60 * 1000 } as const

export const WaitPolicy = Schema.Union([
  Schema.Struct({ kind: Schema.Literal("wait") }),
  Schema.Struct({
    kind: Schema.Literal("after"),
    afterMs: Schema.Int.check(
      Schema.isBetween({ minimum: WAIT_POLICY_BOUNDS.minMs, maximum: WAIT_POLICY_BOUNDS.maxMs })
    ),
    then: Schema.Literals(["empty", "recommended", "cancel"])
  })
])
export type WaitPolicy = typeof WaitPolicy.Type

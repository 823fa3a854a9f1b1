import { WAIT_POLICY_BOUNDS, type WaitPolicy } from "@planbridge/contracts"
import { Schema } from "effect"

/**
 * `serve --wait-policy`: `wait` (the default: a question waits for a person however long), or
 * `after:<duration>:<then>` with a duration in ms, s, min or h and `then` one of `empty`,
 * `recommended`, `cancel` (WaitPolicies.ts), e.g. `after:10min:recommended`.
 */
const PATTERN = /^(?:wait|after:(\d+)(ms|s|min|h):(empty|recommended|cancel))$/u

export const WaitPolicyText = Schema.String.check(
  Schema.isPattern(PATTERN, {
    expected: "wait, or after:<n>(ms|s|min|h):(empty|recommended|cancel), e.g. after:10min:recommended"
  }),
  Schema.makeFilter((text) => {
    const policy = waitPolicyOf(text)
    return (
      policy.kind === "wait" ||
      (policy.afterMs >= WAIT_POLICY_BOUNDS.minMs && policy.afterMs <= WAIT_POLICY_BOUNDS.maxMs) ||
      `the delay must be from ${WAIT_POLICY_BOUNDS.minMs} ms to 7 days`
    )
  })
)

const UNIT_MS = { ms: 1, s: 1_000, min: 60_000, h: 3_600_000 } as const

const unitMs = (unit: string | undefined): number | undefined =>
  unit === "ms" || unit === "s" || unit === "min" || unit === "h" ? UNIT_MS[unit] : undefined
const thenOf = (then: string | undefined) =>
  then === "empty" || then === "recommended" || then === "cancel" ? then : undefined

/** The policy a text matching `WaitPolicyText` names (`wait` for anything else). */
export const waitPolicyOf = (text: string): WaitPolicy => {
  const match = PATTERN.exec(text)
  const unit = unitMs(match?.[2])
  const then = thenOf(match?.[3])
  if (match?.[1] === undefined || unit === undefined || then === undefined) return { kind: "wait" }
  return { kind: "after", afterMs: Number(match[1]) * unit, then }
}

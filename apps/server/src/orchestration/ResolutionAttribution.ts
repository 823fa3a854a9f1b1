import type { ResolvedBy, RuntimeEvent } from "@planbridge/contracts"

/**
 * Who resolved what (issue 29). An answer-like command says, before its session is asked to act,
 * which prompt, request or plan it is about and who sent it (`expect`); the session's resolution
 * events are stamped on their way to ingestion (`stamp`, LiveSessions.ts) with that provenance,
 * or, when no command asked for them, with what ended them on its own: the server when Planbridge
 * restarted or stopped, else the provider (its process exited, its turn ended, it superseded the
 * question). Adapters stay as they are: provenance is the server's knowledge, not the provider's.
 */

/** What a command resolves: a prompt, a native request, a proposed plan. */
export type ResolutionTarget = { readonly prompt: string } | { readonly request: string } | { readonly plan: string }

/**
 * Expectations kept at once. An expectation is consumed by its resolution event; one whose
 * command failed is dropped at once; one whose command succeeded without its session resolving
 * anything (a provider that answered and then died) is the only kind that lingers, and the
 * oldest goes first past this bound.
 */
export const MAX_EXPECTED_RESOLUTIONS = 1_000

const keyOf = (target: ResolutionTarget): string =>
  "prompt" in target
    ? `prompt:${target.prompt}`
    : "request" in target
      ? `request:${target.request}`
      : `plan:${target.plan}`

/** The key of a resolution event's target, undefined for any other event. */
const resolutionKey = (event: RuntimeEvent): string | undefined => {
  switch (event.type) {
    case "user-input.resolved":
      return keyOf({ prompt: event.payload.promptId })
    case "request.resolved":
      return keyOf({ request: event.payload.requestId })
    case "plan.decision":
      return keyOf({ plan: event.payload.planId })
    default:
      return undefined
  }
}

/** The provenance of a resolution no command asked for. */
const unasked = (event: RuntimeEvent): ResolvedBy => {
  const resolution =
    event.type === "user-input.resolved" || event.type === "request.resolved" ? event.payload.resolution : undefined
  return resolution === "server_restarted" || resolution === "server_stopped"
    ? { actor: "server" }
    : { actor: "provider" }
}

/** A resolution made with its provenance (start-up recovery, a policy) keeps it. */
const withResolvedBy = (event: RuntimeEvent, resolvedBy: ResolvedBy): RuntimeEvent => {
  switch (event.type) {
    case "user-input.resolved":
      return event.payload.resolvedBy !== undefined ? event : { ...event, payload: { ...event.payload, resolvedBy } }
    case "request.resolved":
      return event.payload.resolvedBy !== undefined ? event : { ...event, payload: { ...event.payload, resolvedBy } }
    case "plan.decision":
      return event.payload.resolvedBy !== undefined ? event : { ...event, payload: { ...event.payload, resolvedBy } }
    default:
      return event
  }
}

export interface ResolutionAttribution {
  /**
   * Records that `targets` are about to be resolved by `by`; the returned function withdraws the
   * expectation (the command failed: nothing was resolved on its behalf).
   */
  readonly expect: (targets: ReadonlyArray<ResolutionTarget>, by: ResolvedBy) => () => void
  /**
   * The events, each resolution with its `resolvedBy`. A request resolved in the same batch as an
   * expected prompt or plan (its native request, answered by the same reply) shares its provenance.
   */
  readonly stamp: (events: ReadonlyArray<RuntimeEvent>) => ReadonlyArray<RuntimeEvent>
}

export const makeResolutionAttribution = (): ResolutionAttribution => {
  const expected = new Map<string, ResolvedBy>()

  const expect = (targets: ReadonlyArray<ResolutionTarget>, by: ResolvedBy) => {
    const keys = targets.map(keyOf)
    for (const key of keys) {
      expected.delete(key)
      expected.set(key, by)
    }
    while (expected.size > MAX_EXPECTED_RESOLUTIONS) {
      const oldest = expected.keys().next().value
      if (oldest === undefined) break
      expected.delete(oldest)
    }
    return () => {
      for (const key of keys) if (expected.get(key) === by) expected.delete(key)
    }
  }

  const stamp = (events: ReadonlyArray<RuntimeEvent>): ReadonlyArray<RuntimeEvent> => {
    if (!events.some((event) => resolutionKey(event) !== undefined)) return events
    let batch: ResolvedBy | undefined
    const own = events.map((event) => {
      const key = resolutionKey(event)
      if (key === undefined) return undefined
      const by = expected.get(key)
      if (by === undefined) return undefined
      expected.delete(key)
      batch ??= by
      return by
    })
    return events.map((event, i) => {
      if (resolutionKey(event) === undefined) return event
      const by = own[i] ?? (event.type === "request.resolved" ? batch : undefined) ?? unasked(event)
      return withResolvedBy(event, by)
    })
  }

  return { expect, stamp }
}

import type { RuntimeEvent, ThreadId } from "@planbridge/contracts"
import { Effect } from "effect"
import { rawOf, stampDraft, type EventDraft } from "../kernel/EventDraft.ts"
import { makeLogBudget } from "../logBudget.ts"
import { AdapterError, type EmitRuntimeEvent } from "../ProviderAdapter.ts"
import type { AcpProfile } from "./profile.ts"

/**
 * How an ACP session turns the translator's drafts into recorded events: stamped with ids a
 * replay reproduces (`<idPrefix>:event:<n>`), validated, emitted in order; warnings also logged,
 * rate-limited. Runs inside the session's jobs only (the translator's state moves there).
 */
export interface AcpSessionEvents {
  /** Emits the drafts in order; the first one not accepted fails the rest. */
  readonly emitAll: (drafts: ReadonlyArray<EventDraft>) => Effect.Effect<void, AdapterError>
  /** Runs the translator; a thrown mapping bug becomes a runtime.error instead of a crash. */
  readonly translate: (what: string, payload: unknown, f: () => ReadonlyArray<EventDraft>) => ReadonlyArray<EventDraft>
  /** Translates and emits, in one job. */
  readonly emitFrom: (
    what: string,
    payload: unknown,
    f: () => ReadonlyArray<EventDraft>
  ) => Effect.Effect<void, AdapterError>
}

export const makeAcpSessionEvents = (input: {
  readonly profile: AcpProfile
  readonly threadId: ThreadId
  readonly idPrefix: string
  readonly emit: EmitRuntimeEvent
}): AcpSessionEvents => {
  const { profile, idPrefix } = input
  let seq = 0
  // Every warning is one event, but the log gets a rate-limited summary: an agent writing
  // 20,000 bad lines must not write 20,000 lines into the server's log (logBudget.ts).
  const warningLog = makeLogBudget()
  const logWarning = (event: RuntimeEvent): Effect.Effect<void> =>
    event.type !== "runtime.warning"
      ? Effect.void
      : warningLog((dropped) =>
          Effect.logWarning(
            `acp ${profile.provider}: ${event.payload.code}: ${event.payload.message}` +
              (dropped > 0 ? ` (${dropped} earlier warnings of this session not logged)` : "")
          )
        )

  const emitAll: AcpSessionEvents["emitAll"] = (drafts) =>
    Effect.forEach(
      drafts,
      (draft) => {
        seq += 1
        const stamp = { provider: profile.provider, threadId: input.threadId, eventId: `${idPrefix}:event:${seq}` }
        const event = stampDraft(draft, { ...stamp, createdAt: new Date().toISOString() })
        return Effect.andThen(input.emit(event), logWarning(event))
      },
      { discard: true }
    ).pipe(
      Effect.mapError(
        (error) => new AdapterError({ reason: "protocol", message: `event not accepted: ${error.message}` })
      )
    )

  const translate: AcpSessionEvents["translate"] = (what, payload, f) => {
    try {
      return f()
    } catch (error) {
      return [
        {
          type: "runtime.error",
          raw: rawOf("planbridge", what, payload),
          payload: { code: "mapping_failed", message: String(error), fatal: false }
        }
      ]
    }
  }

  return {
    emitAll,
    translate,
    emitFrom: (what, payload, f) => Effect.suspend(() => emitAll(translate(what, payload, f)))
  }
}

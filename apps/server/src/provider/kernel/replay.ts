import type { ProviderKind, RuntimeEvent, ThreadId } from "@planbridge/contracts"
import { Effect, Result, Schema } from "effect"
import { stampDraft, type EventDraft, type Stamp } from "./EventDraft.ts"
import type { AdapterError } from "../AdapterError.ts"
import { replayIds } from "./ids.ts"
import { replayError } from "./ReplayError.ts"
import { TranscriptLine, TranscriptMeta } from "./transcript.ts"

/** Where an event id is drawn: `n`, the how-manieth event of the replay (from 0). */
type EventPosition = { readonly n: number }

/** What a mapping step gets besides its line: the line's index, its time, the next event id. */
export interface ReplayContext {
  readonly index: number
  readonly now: () => string
  readonly nextEventId: () => string
}

/**
 * A provider's mapping as `replay` drives it: the same pure mapping its live session uses, fed
 * the transcript's lines in order. Event ids follow the provider's id scheme (`eventId`), so a
 * replay is deterministic and reproduces the ids its golden files pin.
 */
export interface ReplayMapping<State> {
  /** Says which transcripts this is in an error ("a claude transcript is not a Codex transcript"). */
  readonly label: string
  readonly accepts: (provider: string) => boolean
  readonly start: (
    meta: TranscriptMeta,
    threadId: ThreadId
  ) => Effect.Effect<{ readonly state: State; readonly eventId: (at: EventPosition) => string }, AdapterError>
  readonly step: (
    state: State,
    line: TranscriptLine,
    ctx: ReplayContext
  ) => Effect.Effect<{ readonly state: State; readonly events: ReadonlyArray<RuntimeEvent> }, AdapterError>
}

/**
 * A provider's draft mapping as `replay` drives it: each line decoded as its live session decodes
 * it, stepped, its drafts stamped with the replay's next ids and the line's time. A line the
 * decoder refuses, or that the mapping throws on, is an error naming its index.
 */
export const draftReplay = <State, Line>(mapping: {
  readonly label: string
  readonly accepts: (provider: string) => boolean
  /** The first state, in the replay's id scope (`kernel/ids.ts`), and the provider its events name. */
  readonly start: (
    meta: TranscriptMeta,
    threadId: ThreadId,
    scope: string
  ) => Result.Result<{ readonly state: State; readonly provider: ProviderKind }, string>
  readonly decode: (line: TranscriptLine) => Result.Result<Line, string>
  readonly step: (state: State, line: Line) => { readonly state: State; readonly drafts: ReadonlyArray<EventDraft> }
}): ReplayMapping<{ readonly mapped: State; readonly envelope: Pick<Stamp, "provider" | "threadId"> }> => ({
  label: mapping.label,
  accepts: mapping.accepts,
  start: (meta, threadId) =>
    Effect.flatMap(replayIds(meta, threadId), ({ scope, eventId }) => {
      const started = mapping.start(meta, threadId, scope)
      if (Result.isFailure(started)) return Effect.fail(replayError(started.failure, 0))
      const { state, provider } = started.success
      return Effect.succeed({ state: { mapped: state, envelope: { provider, threadId } }, eventId })
    }),
  step: (state, line, ctx) =>
    Effect.suspend(() => {
      const decoded = mapping.decode(line)
      if (Result.isFailure(decoded)) return Effect.fail(replayError(decoded.failure, ctx.index))
      try {
        const { state: mapped, drafts } = mapping.step(state.mapped, decoded.success)
        const stamp = (draft: EventDraft) =>
          stampDraft(draft, { ...state.envelope, eventId: ctx.nextEventId(), createdAt: ctx.now() })
        const events = drafts.map(stamp)
        return Effect.succeed({ state: { ...state, mapped }, events })
      } catch (error) {
        return Effect.fail(replayError(`mapping failed: ${String(error)}`, ctx.index, error))
      }
    })
})

const decodeMeta = Schema.decodeUnknownResult(TranscriptMeta)
const decodeLine = Schema.decodeUnknownResult(TranscriptLine)

/** A line as given (a JSON value, or JSONL text not yet parsed) → a JSON value. */
const parsed = (line: unknown, index: number): Effect.Effect<unknown, AdapterError> =>
  typeof line !== "string"
    ? Effect.succeed(line)
    : Effect.try({
        try: () => JSON.parse(line) as unknown,
        catch: (e) => replayError(`not JSON: ${String(e)}`, index, e)
      })

/**
 * The one replay: a recorded transcript → the canonical events the live session emitted for it,
 * through `mapping`. Times are `startedAt + t`; a line that is not a transcript line, or that the
 * mapping refuses, is an `AdapterError` (`InvalidTranscript`, kernel/ReplayError.ts) naming its 0-based index.
 */
export const replay = <State>(
  mapping: ReplayMapping<State>,
  lines: ReadonlyArray<unknown>,
  options: { readonly threadId: ThreadId }
): Effect.Effect<ReadonlyArray<RuntimeEvent>, AdapterError> =>
  Effect.gen(function* () {
    const decodedMeta = decodeMeta(yield* parsed(lines[0], 0))
    if (Result.isFailure(decodedMeta))
      return yield* replayError(`the first line must be the transcript's meta line: ${decodedMeta.failure.message}`, 0)
    const meta = decodedMeta.success
    if (!mapping.accepts(meta.provider))
      return yield* replayError(`a ${meta.provider} transcript is not a ${mapping.label} transcript`, 0)
    const startedAt = Date.parse(meta.startedAt)
    if (Number.isNaN(startedAt)) return yield* replayError(`startedAt is not a date: ${meta.startedAt}`, 0)
    const started = yield* mapping.start(meta, options.threadId)
    let state = started.state
    const events: Array<RuntimeEvent> = []
    let n = 0
    for (let index = 1; index < lines.length; index++) {
      const decodedLine = decodeLine(yield* parsed(lines[index], index))
      if (Result.isFailure(decodedLine)) return yield* replayError(decodedLine.failure.message, index)
      const line = decodedLine.success
      const ctx: ReplayContext = {
        index,
        now: () => new Date(startedAt + line.t).toISOString(),
        nextEventId: () => started.eventId({ n: n++ })
      }
      const result = yield* mapping.step(state, line, ctx)
      state = result.state
      events.push(...result.events)
    }
    return events
  })

import type { OperatingMode, RuntimeEvent, ThreadId } from "@planbridge/contracts"
import { Effect, Schema } from "effect"
import { step, type MappingInput } from "./CodexMapping.ts"
import { initialMappingState, type MappingContext } from "./CodexMappingState.ts"
import { ReplayError } from "../ReplayError.ts"

/**
 * Replays a recorded `codex app-server` transcript (JSONL, both directions) through the same
 * pure mapping the live adapter uses, with deterministic event ids and times, so a transcript
 * always yields the same canonical events. The client's own messages are part of the input:
 * its answers resolve the prompts exactly as they did live.
 *
 * Line format: a meta line first, `{"dir":"meta","provider":"codex","codexVersion","startedAt",
 * "initialMode"?}`, then `{"t_ms","dir":"c2s"|"s2c","msg"}`, `{"t_ms","dir":"s2c","line"}` for
 * an unreadable stdout line, `{"t_ms","dir":"s2c","tooLong":{"head","bytes"}}` for one over the
 * line bound, and `{"t_ms","dir":"meta","exit":{"code","signal","expected"?}}`.
 * The older reference layout with the meta fields under `msg` is accepted too.
 */

export { ReplayError }

const ExitInfo = Schema.Struct({
  code: Schema.NullOr(Schema.Finite),
  signal: Schema.NullOr(Schema.String),
  expected: Schema.optionalKey(Schema.Boolean)
})
const MetaFields = {
  provider: Schema.optionalKey(Schema.String),
  codexVersion: Schema.optionalKey(Schema.String),
  startedAt: Schema.optionalKey(Schema.String),
  initialMode: Schema.optionalKey(Schema.Literals(["default", "plan"])),
  /** A number in the older layout, with `signal` beside it. */
  exit: Schema.optionalKey(Schema.Union([ExitInfo, Schema.Finite])),
  signal: Schema.optionalKey(Schema.NullOr(Schema.String))
}
const MetaLine = Schema.Struct({
  t_ms: Schema.optionalKey(Schema.Finite),
  dir: Schema.Literal("meta"),
  ...MetaFields,
  msg: Schema.optionalKey(Schema.Struct(MetaFields))
})
const TrafficLine = Schema.Struct({ t_ms: Schema.Finite, dir: Schema.Literals(["c2s", "s2c"]), msg: Schema.Unknown })
const RawLine = Schema.Struct({ t_ms: Schema.Finite, dir: Schema.Literal("s2c"), line: Schema.String })
const TooLongLine = Schema.Struct({
  t_ms: Schema.Finite,
  dir: Schema.Literal("s2c"),
  tooLong: Schema.Struct({ head: Schema.String, bytes: Schema.Finite })
})
const TranscriptLine = Schema.Union([MetaLine, TooLongLine, RawLine, TrafficLine])
type TranscriptLine = typeof TranscriptLine.Type

const decodeLine = Schema.decodeUnknownEffect(TranscriptLine)

const parse = (line: unknown, index: number): Effect.Effect<TranscriptLine, ReplayError> =>
  Effect.gen(function* () {
    const value =
      typeof line === "string"
        ? yield* Effect.try({
            try: () => JSON.parse(line) as unknown,
            catch: (e) => new ReplayError({ message: `not JSON: ${String(e)}`, line: index })
          })
        : line
    return yield* Effect.mapError(decodeLine(value), (e) => new ReplayError({ message: e.message, line: index }))
  })

const EPOCH = Date.parse("1970-01-01T00:00:00.000Z")

export const replayTranscript = (
  lines: ReadonlyArray<unknown>,
  options: { readonly threadId: ThreadId }
): Effect.Effect<ReadonlyArray<RuntimeEvent>, ReplayError> =>
  Effect.gen(function* () {
    const parsed: Array<TranscriptLine> = []
    for (const [index, line] of lines.entries()) parsed.push(yield* parse(line, index))
    const meta = parsed[0]
    if (meta === undefined || meta.dir !== "meta")
      return yield* new ReplayError({ message: "the first line must be the meta line", line: 0 })
    const metaFields = { ...("msg" in meta ? meta.msg : {}), ...meta }
    if (metaFields.provider !== undefined && metaFields.provider !== "codex") {
      return yield* new ReplayError({
        message: `a ${metaFields.provider} transcript is not a Codex transcript`,
        line: 0
      })
    }
    const startedAt = metaFields.startedAt !== undefined ? Date.parse(metaFields.startedAt) : EPOCH
    if (Number.isNaN(startedAt))
      return yield* new ReplayError({ message: `startedAt is not a date: ${metaFields.startedAt}`, line: 0 })

    let tMs = 0
    let counter = 0
    const ctx: MappingContext = {
      now: () => new Date(startedAt + tMs).toISOString(),
      nextEventId: () => `${options.threadId}:codex-replay:${String(counter++).padStart(6, "0")}`
    }
    const initialMode: OperatingMode = metaFields.initialMode ?? "default"
    let state = initialMappingState(options.threadId, initialMode)
    const events: Array<RuntimeEvent> = []
    for (const line of parsed.slice(1)) {
      tMs = line.t_ms ?? tMs
      let input: MappingInput | undefined
      if (line.dir === "meta") {
        const fields = { ...("msg" in line ? line.msg : {}), ...line }
        const exit = fields.exit
        if (typeof exit === "number")
          input = { kind: "exit", code: exit, signal: fields.signal ?? null, expected: false }
        else if (exit !== undefined)
          input = { kind: "exit", code: exit.code, signal: exit.signal, expected: exit.expected ?? false }
      } else if ("tooLong" in line) {
        input = { kind: "too_long", head: line.tooLong.head, bytes: line.tooLong.bytes }
      } else if ("line" in line) {
        input = { kind: "invalid", line: line.line, reason: "not JSON" }
      } else {
        input = { kind: line.dir, msg: line.msg }
      }
      if (input === undefined) continue
      const result = step(state, input, ctx)
      state = result.state
      events.push(...result.events)
    }
    return events
  })

import type { RuntimeEvent, ThreadId } from "@planbridge/contracts"
import { Effect, Exit, Schema } from "effect"
import { step, type MappingInput } from "./CodexMapping.ts"
import { initialMappingState, type CodexMappingState } from "./CodexMappingState.ts"
import { ReplayError } from "../kernel/ReplayError.ts"
import { replay, type ReplayMapping } from "../kernel/replay.ts"

/**
 * Codex transcripts (the kernel's one format, `kernel/transcript.ts`) replay through the same
 * pure mapping the live adapter uses. `in`/`out` lines are the app-server's JSON-RPC messages;
 * `local` lines are what the transport saw that is no message: `{kind:"unreadable",line}`,
 * `{kind:"tooLong",head,bytes}` and `{kind:"exit",code,signal,expected}`. The meta line may say
 * `initialMode` ("default" unless it says "plan"). Event ids: `<thread>:codex-replay:<n>`.
 */

export { ReplayError }

/** The `local` lines of a Codex transcript, as the transport records them. */
export const CodexLocal = Schema.Union([
  Schema.Struct({ kind: Schema.Literal("unreadable"), line: Schema.String }),
  Schema.Struct({ kind: Schema.Literal("tooLong"), head: Schema.String, bytes: Schema.Finite }),
  Schema.Struct({
    kind: Schema.Literal("exit"),
    code: Schema.NullOr(Schema.Finite),
    signal: Schema.NullOr(Schema.String),
    expected: Schema.optionalKey(Schema.Boolean)
  })
])
export type CodexLocal = typeof CodexLocal.Type

const decodeLocal = Schema.decodeUnknownExit(CodexLocal)
const InitialMode = Schema.Struct({ initialMode: Schema.optionalKey(Schema.Literals(["default", "plan"])) })
const decodeInitialMode = Schema.decodeUnknownExit(InitialMode)

const localInput = (local: CodexLocal): MappingInput => {
  switch (local.kind) {
    case "unreadable":
      return { kind: "invalid", line: local.line, reason: "not JSON" }
    case "tooLong":
      return { kind: "too_long", head: local.head, bytes: local.bytes }
    case "exit":
      return { kind: "exit", code: local.code, signal: local.signal, expected: local.expected ?? false }
  }
}

export const codexReplayMapping: ReplayMapping<CodexMappingState> = {
  label: "Codex",
  accepts: (provider) => provider === "codex",
  start: (meta, threadId) => {
    const mode = decodeInitialMode(meta)
    if (Exit.isFailure(mode)) return Effect.fail(new ReplayError({ message: String(mode.cause), line: 0 }))
    return Effect.succeed({
      state: initialMappingState(threadId, mode.value.initialMode ?? "default"),
      eventId: ({ n }) => `${threadId}:codex-replay:${String(n).padStart(6, "0")}`
    })
  },
  step: (state, line, ctx) => {
    let input: MappingInput
    if (line.dir === "local") {
      const local = decodeLocal(line.msg)
      if (Exit.isFailure(local))
        return Effect.fail(
          new ReplayError({ message: `not a Codex local line: ${String(local.cause)}`, line: ctx.index })
        )
      input = localInput(local.value)
    } else input = { kind: line.dir === "in" ? "s2c" : "c2s", msg: line.msg }
    const result = step(state, input, ctx)
    return Effect.succeed({ state: result.state, events: result.events })
  }
}

export const replayTranscript = (
  lines: ReadonlyArray<unknown>,
  options: { readonly threadId: ThreadId }
): Effect.Effect<ReadonlyArray<RuntimeEvent>, ReplayError> => replay(codexReplayMapping, lines, options)

import { Effect, Exit, Schema } from "effect"
import { step, type MappingInput } from "./CodexMapping.ts"
import { initialMappingState, type CodexMappingState } from "./CodexMappingState.ts"
import { CodexLocal } from "./CodexProtocol.ts"
import { ReplayError } from "../kernel/ReplayError.ts"
import { stampAll, type ReplayMapping } from "../kernel/replay.ts"

/**
 * Codex transcripts (the kernel's one format, `kernel/transcript.ts`) replay through the same
 * pure mapping the live adapter uses: its input is the transcript line (`in`/`out` the
 * app-server's JSON-RPC messages, `local` a `CodexLocal`, decoded here). The meta line may say
 * `initialMode` ("default" unless it says "plan"). Event ids: `<thread>:codex-replay:<n>`.
 */

const decodeLocal = Schema.decodeUnknownExit(CodexLocal)
const InitialMode = Schema.Struct({ initialMode: Schema.optionalKey(Schema.Literals(["default", "plan"])) })
const decodeInitialMode = Schema.decodeUnknownExit(InitialMode)

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
    const local = line.dir === "local" ? decodeLocal(line.msg) : undefined
    if (local !== undefined && Exit.isFailure(local))
      return Effect.fail(
        new ReplayError({ message: `not a Codex local line: ${String(local.cause)}`, line: ctx.index })
      )
    const input: MappingInput =
      local === undefined
        ? { dir: line.dir === "in" ? "in" : "out", msg: line.msg }
        : { dir: "local", msg: local.value }
    const result = step(state, input)
    const events = stampAll(result.drafts, ctx, { provider: "codex", threadId: state.threadId })
    return Effect.succeed({ state: result.state, events })
  }
}

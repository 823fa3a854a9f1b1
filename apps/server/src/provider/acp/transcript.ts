import { Schema } from "effect"
import { makeTranscriptWriter, type TranscriptLine, type TranscriptMeta } from "../kernel/transcript.ts"
import { InvalidLine } from "./native.ts"
import type { TrafficDirection, TrafficTap } from "./transportContract.ts"
import type { AcpLocal } from "./replay.ts"

/**
 * Records an ACP session in the kernel's one transcript format: every JSON-RPC message in
 * processing order (`in` from the agent, `out` ours), an agent line that is none as a `local`
 * `{kind:"invalid"}` line, and optionally the agent's exit (`{kind:"exit"}`). `replayTranscript`
 * turns such a transcript back into canonical events.
 */
export interface TranscriptRecorder {
  readonly tap: TrafficTap
  readonly exit: (exit: Omit<Extract<AcpLocal, { kind: "exit" }>, "kind">) => void
  /** The meta line followed by every recorded line. */
  readonly lines: () => ReadonlyArray<TranscriptMeta | TranscriptLine>
}

const decodeInvalidLine = Schema.decodeUnknownSync(InvalidLine)

export const makeTranscriptRecorder = (
  meta: { readonly provider: string; readonly agent: string; readonly idPrefix?: string },
  now: () => number = Date.now
): TranscriptRecorder => {
  const writer = makeTranscriptWriter(meta, now)
  return {
    tap: (dir: TrafficDirection, msg: unknown) => {
      if (dir === "agent->client:invalid") writer.write("local", { kind: "invalid", ...decodeInvalidLine(msg) })
      else writer.write(dir === "agent->client" ? "in" : "out", msg)
    },
    exit: (exit) => writer.write("local", { kind: "exit", ...exit }),
    lines: writer.lines
  }
}

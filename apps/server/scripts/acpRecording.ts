/** One ACP fixture recording (record-acp-fixtures.ts): what drives it, and how it is recorded and checked. */
import { ThreadId } from "@planbridge/contracts"
import { resolve } from "node:path"
import { makeAcpAdapter } from "../src/provider/acp/AcpAdapter.ts"
import type { AcpProfile } from "../src/provider/acp/AcpProfile.ts"
import { saveFixture } from "./fixtureRecording.ts"
import { replayScope } from "../src/provider/kernel/ids.ts"
import { makeTranscriptWriter } from "../src/provider/kernel/transcript.ts"
import { openSession, type OpenSession } from "../test/provider/acp/harness.ts"

export const root = resolve(import.meta.dirname, "../../..")
export const bin = (name: string) => resolve(root, "node_modules/.bin", name)
/** The Zed-era wrappers the first ACP fixtures were recorded with (still installed). */
export const zedCodexAcp = resolve(root, "node_modules/@zed-industries/codex-acp/bin/codex-acp.js")
export const zedClaudeAcp = resolve(root, "node_modules/@zed-industries/claude-agent-acp/dist/index.js")

export interface Recording {
  readonly dir: "cursor" | "acp"
  readonly name: string
  readonly agent: string
  readonly profile: AcpProfile
  readonly env: Record<string, string | undefined>
  readonly cwd: string
  readonly mode: "default" | "plan"
  /** Replaced by `/scratch` in the written transcript (machine-specific temp paths). */
  readonly scratch: string
  readonly drive: (open: OpenSession) => Promise<void>
}

export const record = async (recording: Recording): Promise<void> => {
  const threadId = ThreadId.make(`fixture-${recording.name}`)
  // Recorded in the replay's own scope, so that the live ids are the ones a replay gives.
  const idPrefix = replayScope(threadId)
  const recorder = makeTranscriptWriter({ provider: recording.profile.provider, agent: recording.agent, idPrefix })
  const adapter = makeAcpAdapter(recording.profile, {
    env: recording.env,
    tap: recorder.record,
    idPrefix: () => idPrefix
  })
  const open = await openSession(adapter, { threadId, cwd: recording.cwd, mode: recording.mode })
  try {
    await recording.drive(open)
  } finally {
    await open.close()
  }
  const exited = open.log.ofType("session.exited")[0]
  if (exited !== undefined) {
    const { exitKind, exitCode, signal } = exited.payload
    recorder.record({ dir: "local", msg: { kind: "exit", exitKind, exitCode, signal } })
  }

  await saveFixture({
    dir: recording.dir,
    name: recording.name,
    threadId,
    lines: recorder.lines(),
    live: open.log.events,
    anonymise: (text) => text.split(recording.scratch).join("/scratch")
  })
}

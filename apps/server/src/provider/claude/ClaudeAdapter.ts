import { Effect } from "effect"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { FlowProbe } from "../inbound.ts"
import { ProcessGroups } from "../ProcessGroups.ts"
import { AdapterError, type ProviderAdapter } from "../ProviderAdapter.ts"
import { CLAUDE_MODEL } from "./ClaudeModes.ts"
import { claudeEnv, makeClaudeProcess, type ClaudeChecklistTools } from "./ClaudeProcess.ts"
import { openClaudeSession } from "./ClaudeSession.ts"
import { SDK_VERSION, type MetaLine, type NativeLine } from "./ClaudeTranscript.ts"
import { definedFields } from "../../util/definedFields.ts"

export interface ClaudeAdapterOptions {
  /** The Messages API the CLI talks to (`ANTHROPIC_BASE_URL`). */
  readonly baseUrl: string
  readonly apiKey?: string
  /** `tasks` (the CLI's default: TaskCreate/TaskUpdate/…) or `todowrite` (TodoWrite). */
  readonly checklistTools?: ClaudeChecklistTools
  /** Added to the CLI's environment (tests). */
  readonly extraEnv?: Readonly<Record<string, string>>
  /** Pinned: other models change the request shapes. */
  readonly model?: string
  readonly pathToClaudeCodeExecutable?: string
  /** Receives the meta line and every transcript line (see ClaudeTranscript.ts). */
  readonly transcript?: (line: MetaLine | NativeLine) => void
  /** Counters of the SDK's read-ahead as the pacing sees it (`highWaterLines`, `pauses`), for tests. */
  readonly probe?: FlowProbe
}

/**
 * The Claude Agent SDK adapter. Each session runs on its own `HOME` (the CLI keeps its settings,
 * plans and session logs there): the thread's directory the server keeps, or else a scratch one
 * removed when the session's scope closes.
 */
export const makeClaudeAdapter = (options: ClaudeAdapterOptions): ProviderAdapter => ({
  provider: "claude",
  // The CLI keeps its session logs under `$HOME/.claude/projects/`: `resume` reads them there.
  homeFor: (threadDir) => threadDir,
  startSession: (input) =>
    Effect.gen(function* () {
      const home =
        input.home ??
        (yield* Effect.acquireRelease(
          Effect.tryPromise({
            try: () => mkdtemp(join(tmpdir(), "planbridge-claude-home-")),
            catch: (error) =>
              new AdapterError({ reason: "start_failed", message: `cannot create a HOME for Claude: ${String(error)}` })
          }),
          (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
        ))
      const startedAt = Date.now()
      options.transcript?.({
        dir: "meta",
        provider: "claude",
        sdkVersion: SDK_VERSION,
        startedAt: new Date(startedAt).toISOString()
      })
      return yield* openClaudeSession({
        input,
        env: claudeEnv({
          home,
          baseUrl: options.baseUrl,
          apiKey: options.apiKey ?? "planbridge-local",
          ...definedFields({ checklistTools: options.checklistTools }),
          ...definedFields({ extraEnv: options.extraEnv })
        }),
        model: options.model ?? CLAUDE_MODEL,
        startedAt,
        process: makeClaudeProcess(yield* ProcessGroups, options.probe),
        ...definedFields({ pathToClaudeCodeExecutable: options.pathToClaudeCodeExecutable }),
        ...definedFields({ transcript: options.transcript })
      })
    })
})

import type { SDKUserMessage } from "@anthropic-ai/claude-agent-sdk"
import { type OperatingMode, type TurnId } from "@planbridge/contracts"
import { Cause, Effect, FiberSet, Option, Queue, Stream } from "effect"
import { randomUUID } from "node:crypto"
import { adapterFailure, failAdapter, type ProviderSession, type StartSessionInput } from "../ProviderAdapter.ts"
import { makeClaudeSessionCore } from "./ClaudeSessionCore.ts"
import { makeCanUseTool } from "./ClaudePermissionBridge.ts"
import { canonicalMode, CLAUDE_CAPABILITIES, CLAUDE_MODEL, nativeMode } from "./ClaudeModes.ts"
import { CLAUDE_READ_AHEAD, sdkReadAhead, type ClaudeProcessHandle } from "./ClaudeProcess.ts"
import type { ClaudeEnvAdditions } from "./ClaudeUserEnv.ts"
import { makeOnElicitation } from "./ClaudeElicitation.ts"
import { claudeReplies, describeCliEnd } from "./ClaudeDecisions.ts"
import { SDK_VERSION, type ClaudeLine } from "./ClaudeTranscript.ts"
import { definedFields } from "../../util/definedFields.ts"
import type { McpServerConfig } from "@anthropic-ai/claude-agent-sdk"
import { makeAnswers } from "../kernel/Answers.ts"
import { turnStartRefusal } from "../kernel/OpenRequests.ts"
import type { TranscriptLine, TranscriptMeta } from "../kernel/transcript.ts"

export interface ClaudeSessionOptions extends ClaudeEnvAdditions {
  /** Pinned: other models change the request shapes. */
  readonly model?: string
  /** Receives the meta line and every line of the session's transcript (`kernel/transcript.ts`). */
  readonly transcript?: (line: TranscriptMeta | TranscriptLine) => void
  /** MCP servers added to every session (the SDK's `mcpServers`), beside those of the user's settings. */
  readonly mcpServers?: Record<string, McpServerConfig>
}

/** How the adapter launches the CLI for a session: its environment, the settings it loads (none by default), its process. */
export interface ClaudeLaunch {
  readonly env: Record<string, string>
  readonly settingSources?: ReadonlyArray<"user" | "project" | "local">
  readonly process: ClaudeProcessHandle
}

/**
 * One Claude Code session: a single `query()` fed by a queue of user messages, so that one CLI
 * process carries every turn. Everything that happens (SDK messages, callback calls, our
 * decisions) becomes a transcript line, is mapped under one lock, and is emitted before the
 * SDK hears our answer.
 *
 * Answer integrity, by construction: a `canUseTool` callback waits for the receipt the pure
 * mapping writes once it has closed the request, after its events were emitted (see
 * `ClaudeSessionCore.ts`).
 */
export const makeClaudeSession = (options: ClaudeSessionOptions, input: StartSessionInput, config: ClaudeLaunch) =>
  Effect.gen(function* () {
    const model = options.model ?? CLAUDE_MODEL
    // Transcript times `t` count from the meta line's.
    const startedAt = Date.now()
    options.transcript?.({
      dir: "meta",
      provider: "claude",
      sdkVersion: SDK_VERSION,
      startedAt: new Date(startedAt).toISOString()
    })
    // A resumed session keeps its id: the CLI appends to the same session log.
    const resuming = input.resumeNativeSessionId
    const sessionId = resuming ?? randomUUID()
    const inbox = yield* Queue.unbounded<SDKUserMessage, Cause.Done>()
    // The SDK calls us from plain promises: our effects run with this session's services, as
    // fibers of this session's scope (interrupted when it closes), not on the default runtime.
    const run = yield* FiberSet.makeRuntimePromise()
    const core = yield* makeClaudeSessionCore({ input, startedAt, transcript: options.transcript, run })
    const { record, now, local, decide } = core
    let exited = false
    let closing = false
    let interruptRequested = false

    const canUseTool = makeCanUseTool({
      core,
      interruptRequested: () => interruptRequested,
      exited: config.process.exited
    })

    // The Agent SDK is loaded with the first Claude session, not when the server starts: most
    // servers never run one, and loading it costs ~150 ms and tens of MB (issue 17).
    const { query } = yield* Effect.tryPromise({
      try: () => import("@anthropic-ai/claude-agent-sdk"),
      catch: adapterFailure("start_failed", "cannot load the Claude Agent SDK")
    })
    const q = query({
      prompt: Stream.toAsyncIterable(Stream.fromQueue(inbox)),
      options: {
        cwd: input.cwd,
        ...(resuming === undefined ? { sessionId } : { resume: resuming }),
        model,
        permissionMode: nativeMode(input.mode) ?? "default",
        settingSources: [...(config.settingSources ?? [])],
        includePartialMessages: true,
        env: config.env,
        canUseTool,
        onElicitation: makeOnElicitation(core),
        ...definedFields({ mcpServers: options.mcpServers }),
        spawnClaudeCodeProcess: config.process.spawn
      }
    })

    // The SDK reads the CLI's stdout into a queue without bound; reading is paced by its depth.
    const readAhead = sdkReadAhead(q)
    if (readAhead !== undefined) config.process.paceBy(readAhead)
    else yield* Effect.logWarning("claude: the Agent SDK keeps no read-ahead queue where expected; not paced")

    const startLine = local({
      kind: "start",
      cwd: input.cwd,
      permissionMode: nativeMode(input.mode) ?? "default",
      model,
      sessionId,
      ...(config.settingSources === undefined ? {} : { settingSources: config.settingSources }),
      ...(resuming === undefined ? {} : { resumed: true })
    })
    if (!(yield* record(startLine))) return yield* failAdapter("start_failed", "could not record the session start")

    const finish = (error: unknown) =>
      Effect.gen(function* () {
        const exit = closing
          ? undefined
          : Option.getOrUndefined(
              yield* Effect.promise(() => config.process.exited).pipe(Effect.timeoutOption("2 seconds"))
            )
        exited = true
        const tooLong = config.process.lineTooLong()
        if (tooLong !== undefined) yield* record(local({ kind: "lineTooLong", bytes: tooLong.bytes }))
        const end = { closing, exit, error, tooLongBytes: tooLong?.bytes, stderr: config.process.stderrTail() }
        yield* record(local({ kind: "exit", ...describeCliEnd(end) }))
      })
    /**
     * The SDK's messages waiting at once: the first awaited, then every one its read-ahead
     * already holds (their `next` resolves at once), at most the read-ahead bound and one more;
     * `end` when the SDK's stream ended after them (`error`: how it failed).
     */
    const takeBurst = async () => {
      const lines: Array<ClaudeLine> = []
      for (;;) {
        const next = await q.next().catch((error: unknown) => ({ failed: error }))
        if ("failed" in next) return { lines, end: { error: next.failed } }
        if (next.done === true) return { lines, end: { error: undefined } }
        // Taken: the CLI's stdout may be read again once the SDK's read-ahead is down to half.
        config.process.taken()
        // Through JSON, so that the live mapping sees exactly what a transcript replays.
        const msg = JSON.parse(JSON.stringify(next.value)) as { readonly type: string }
        lines.push({ t: now(), dir: "in", msg })
        if (lines.length > CLAUDE_READ_AHEAD || (readAhead?.() ?? 0) === 0) return { lines }
      }
    }
    const reader = (async () => {
      try {
        for (;;) {
          const { lines, end } = await takeBurst()
          // The lines taken before a failure are recorded before it.
          if (lines.length > 0) await run(core.applyAll(lines))
          if (end !== undefined) return await run(finish(end.error))
        }
      } catch (error) {
        await run(finish(error))
      }
    })()

    yield* Effect.addFinalizer(() =>
      Effect.gen(function* () {
        closing = true
        Queue.endUnsafe(inbox)
        // The CLI's group gets its grace period (it may still be writing its session log), then
        // the SDK lets go of what is left.
        yield* config.process.shutdown
        q.close()
        yield* Effect.promise(() => reader).pipe(Effect.timeoutOption("3 seconds"))
      })
    )

    // Fails fast (start_failed) when the CLI cannot start, instead of at the first turn.
    yield* Effect.tryPromise({
      try: () => q.initializationResult(),
      catch: adapterFailure("start_failed", "Claude Code did not start")
    }).pipe(
      Effect.timeoutOrElse({
        duration: "30 seconds",
        orElse: () => failAdapter("start_failed", "Claude Code did not start: no answer within 30 s")
      })
    )

    const ensureAlive = Effect.suspend(() =>
      exited ? failAdapter("provider_exited", "the Claude Code process has exited") : Effect.void
    )
    const control = <A>(what: string, run: () => Promise<A>) =>
      Effect.tryPromise({
        try: run,
        catch: adapterFailure("protocol", `${what} failed`)
      })

    const setMode = (mode: OperatingMode) =>
      Effect.gen(function* () {
        yield* ensureAlive
        const target = nativeMode(mode)
        if (target === undefined) return yield* failAdapter("unsupported", `Claude has no ${mode} mode`)
        yield* record(local({ kind: "setPermissionMode", mode: target }))
        yield* control("setPermissionMode", () => q.setPermissionMode(target))
      })

    const session: ProviderSession = {
      provider: "claude",
      threadId: input.threadId,
      capabilities: Effect.succeed(CLAUDE_CAPABILITIES),
      mode: Effect.sync(() => canonicalMode(core.peek().mode)),
      startTurn: (turn) =>
        Effect.gen(function* () {
          yield* ensureAlive
          if (turn.mode !== undefined && turn.mode !== canonicalMode(core.peek().mode)) yield* setMode(turn.mode)
          const turnId = `claude-turn-${randomUUID()}` as TurnId
          // A second message would be queued by the CLI behind the running turn and look like its output.
          // Strict: if the turn's events cannot be recorded, it never started and nothing is sent.
          yield* core.apply(local({ kind: "user", turnId, text: turn.text }), {
            guard: ({ requests: open, turn: running }) => turnStartRefusal(open, running?.turnId, false),
            strict: true,
            after: Effect.suspend(() => {
              interruptRequested = false
              return Queue.offer(inbox, {
                type: "user",
                message: { role: "user", content: turn.text },
                parent_tool_use_id: null
              })
            })
          })
          return turnId
        }),
      interrupt: () =>
        Effect.gen(function* () {
          yield* ensureAlive
          interruptRequested = true
          yield* record(local({ kind: "interrupt" }))
          yield* control("interrupt", () => q.interrupt())
        }),
      setMode,
      ...makeAnswers(
        Effect.map(core.state, (state) => state.requests),
        decide,
        claudeReplies(() => core.peek().unansweredAnnotations)
      )
    }
    return session
  })

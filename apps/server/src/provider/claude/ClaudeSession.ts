import { query, type CanUseTool, type PermissionResult as SdkPermissionResult, type SDKUserMessage } from "@anthropic-ai/claude-agent-sdk"
import {
  redactAnswerEntries,
  validateAnswer,
  type EventId,
  type OperatingMode,
  type OptionId,
  type PromptId,
  type RequestId,
  type TurnId,
  type UserInputAnswer
} from "@planbridge/contracts"
import { Cause, Deferred, Effect, Queue, Semaphore, Stream } from "effect"
import { randomUUID } from "node:crypto"
import { AdapterError, type PlanDecisionInput, type ProviderSession, type StartSessionInput } from "../ProviderAdapter.ts"
import { ClaudeMapper, stampEvent } from "./ClaudeMapping.ts"
import { canonicalMode, CLAUDE_CAPABILITIES, nativeMode } from "./ClaudeModes.ts"
import type { ClaudeProcessHandle } from "./ClaudeProcess.ts"
import { nativeAnswers } from "./ClaudePrompts.ts"
import { cancelDecision, type OpenRequest } from "./ClaudeRequests.ts"
import type { Decision, LocalLine, NativeLine } from "./ClaudeTranscript.ts"

type LocalLineWithoutTime = LocalLine extends infer L ? (L extends LocalLine ? Omit<L, "t"> : never) : never

/** What the `canUseTool` callback hands back, completed with the input the CLI gave it. */
type NativeDecision = { readonly behavior: "allow"; readonly patch: Record<string, unknown> } | { readonly behavior: "deny"; readonly message: string }

export interface ClaudeSessionConfig {
  readonly input: StartSessionInput
  readonly env: Record<string, string>
  readonly model: string
  /** Epoch ms of the meta line: transcript times `t` count from here. */
  readonly startedAt: number
  readonly process: ClaudeProcessHandle
  readonly pathToClaudeCodeExecutable?: string
  /** Receives every transcript line after the meta line (the recorder writes them out). */
  readonly transcript?: (line: NativeLine) => void
}

const fail = (reason: AdapterError["reason"], message: string) => Effect.fail(new AdapterError({ reason, message }))

/**
 * One Claude Code session: a single `query()` fed by a queue of user messages, so that one CLI
 * process carries every turn. Everything that happens (SDK messages, callback calls, our
 * decisions) becomes a transcript line, is mapped under one lock, and is emitted before the
 * SDK hears our answer.
 */
export const openClaudeSession = (config: ClaudeSessionConfig) =>
  Effect.gen(function* () {
    const { input } = config
    const startedAt = config.startedAt
    const sessionId = randomUUID()
    const mapper = new ClaudeMapper(input.threadId)
    const lock = Semaphore.makeUnsafe(1)
    const decisions = new Map<string, Deferred.Deferred<NativeDecision>>()
    const inbox = yield* Queue.unbounded<SDKUserMessage, Cause.Done>()
    let exited = false
    let closing = false
    let interruptRequested = false

    const decisionFor = (toolUseID: string) => {
      const existing = decisions.get(toolUseID)
      if (existing !== undefined) return existing
      const created = Deferred.makeUnsafe<NativeDecision>()
      decisions.set(toolUseID, created)
      return created
    }
    /** Our answers, taken under the lock; handed to the CLI only after their events were emitted. */
    const answered = new Map<string, NativeDecision>()
    /** Releases every callback whose request is closed: with our answer, or (turn end, exit) a denial. */
    const release = Effect.sync(() => {
      for (const [toolUseID, deferred] of decisions) {
        if (mapper.isOpen(toolUseID)) continue
        Deferred.doneUnsafe(deferred, Effect.succeed(answered.get(toolUseID) ?? { behavior: "deny", message: "The request was cancelled." }))
      }
    })

    const recordUnlocked = (line: NativeLine) =>
      Effect.gen(function* () {
        config.transcript?.(line)
        const drafts = mapper.step(line)
        for (const draft of drafts) {
          yield* input.emit(
            stampEvent(draft, {
              eventId: randomUUID() as EventId,
              createdAt: new Date().toISOString(),
              provider: "claude",
              threadId: input.threadId
            })
          )
        }
      })
    const record = (line: NativeLine) => lock.withPermit(recordUnlocked(line).pipe(Effect.ensuring(release)))
    const now = () => Date.now() - startedAt
    const local = (line: LocalLineWithoutTime): LocalLine => ({ ...line, t: now() }) as LocalLine

    /** Resolves an open request: the decision is emitted first, then the callback is released. */
    const decide = (request: OpenRequest, decision: Decision, native: NativeDecision) =>
      lock.withPermit(
        Effect.gen(function* () {
          if (!mapper.isOpen(request.toolUseID)) return yield* fail("prompt_not_pending", "the request is no longer pending")
          answered.set(request.toolUseID, native)
          yield* recordUnlocked(local({ _local: "decision", toolUseID: request.toolUseID, decision })).pipe(
            // Not accepted by `emit`: the CLI must not hear this answer.
            Effect.onError(() => Effect.sync(() => answered.delete(request.toolUseID))),
            Effect.ensuring(release)
          )
        })
      ).pipe(Effect.mapError((e) => (e._tag === "EmitError" ? new AdapterError({ reason: "protocol", message: e.message }) : e)))

    const canUseTool: CanUseTool = async (toolName, toolInput, options) => {
      const toolUseID = options.toolUseID
      const deferred = decisionFor(toolUseID)
      const line = local({ _local: "canUseTool", toolName, input: toolInput, options: { toolUseID, ...(options.requestId !== undefined ? { requestId: options.requestId } : {}) } })
      const recorded = await Effect.runPromiseExit(record(line))
      const request = mapper.openRequests().find((r) => r.toolUseID === toolUseID)
      const alreadyDecided = await Effect.runPromise(Deferred.isDone(deferred))
      if (recorded._tag === "Failure" || (request === undefined && !alreadyDecided)) {
        return { behavior: "deny", message: "Planbridge could not present this request." }
      }
      const cancel = () => {
        const open = mapper.openRequests().find((r) => r.toolUseID === toolUseID)
        if (open !== undefined) void Effect.runPromiseExit(decide(open, cancelDecision(open, "interrupted"), { behavior: "deny", message: "Interrupted by the user." }))
      }
      // The signal also aborts when the CLI dies; then the exit resolves the request
      // `provider_exited`. Without our interrupt and without an exit, it is a cancellation.
      const onAbort = () => {
        if (interruptRequested) return cancel()
        void Promise.race([config.process.exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 2000).unref())]).then(
          (died) => {
            if (!died) cancel()
          }
        )
      }
      options.signal.addEventListener("abort", onAbort, { once: true })
      if (options.signal.aborted) onAbort()
      const native = await Effect.runPromise(Deferred.await(deferred))
      options.signal.removeEventListener("abort", onAbort)
      const result: SdkPermissionResult =
        native.behavior === "allow" ? { behavior: "allow", updatedInput: { ...toolInput, ...native.patch } } : { behavior: "deny", message: native.message }
      await Effect.runPromiseExit(record(local({ _local: "canUseTool-result", toolName, toolUseID, result })))
      decisions.delete(toolUseID)
      answered.delete(toolUseID)
      return result
    }

    const q = query({
      prompt: Stream.toAsyncIterable(Stream.fromQueue(inbox)),
      options: {
        cwd: input.cwd,
        sessionId,
        model: config.model,
        permissionMode: nativeMode(input.mode) ?? "default",
        settingSources: [],
        includePartialMessages: true,
        env: config.env,
        canUseTool,
        spawnClaudeCodeProcess: config.process.spawn,
        ...(config.pathToClaudeCodeExecutable !== undefined ? { pathToClaudeCodeExecutable: config.pathToClaudeCodeExecutable } : {})
      }
    })

    yield* record(local({ _local: "start", cwd: input.cwd, permissionMode: nativeMode(input.mode) ?? "default", model: config.model, sessionId })).pipe(
      Effect.mapError((e) => new AdapterError({ reason: "start_failed", message: e.message }))
    )

    const finish = async (error: unknown) => {
      const exit = closing ? undefined : await Promise.race([config.process.exited, new Promise<undefined>((r) => setTimeout(() => r(undefined), 2000).unref())])
      exited = true
      const message = error === undefined ? undefined : error instanceof Error ? error.message : String(error)
      const exitKind = closing ? "graceful" : exit?.signal ? "killed" : error !== undefined || (exit?.code ?? 0) !== 0 ? "crashed" : "graceful"
      const stderr = config.process.stderrTail().trim()
      await Effect.runPromiseExit(
        record(
          local({
            _local: "exit",
            exitKind,
            exitCode: exit?.code ?? null,
            signal: exit?.signal ?? null,
            ...(message !== undefined ? { message: stderr.length > 0 && exitKind !== "graceful" ? `${message}\n${stderr}` : message } : {})
          })
        )
      )
    }
    const reader = (async () => {
      try {
        for await (const message of q) {
          // Through JSON, so that the live mapping sees exactly what a transcript replays.
          await Effect.runPromiseExit(record({ ...(JSON.parse(JSON.stringify(message)) as object), _t: now() } as NativeLine))
        }
        await finish(undefined)
      } catch (error) {
        await finish(error)
      }
    })()

    yield* Effect.addFinalizer(() =>
      Effect.promise(async () => {
        closing = true
        Queue.endUnsafe(inbox)
        q.close()
        config.process.killGroup()
        await Promise.race([reader, new Promise((r) => setTimeout(r, 3000).unref())])
      })
    )

    // Fails fast (start_failed) when the CLI cannot start, instead of at the first turn.
    yield* Effect.tryPromise({
      try: () =>
        Promise.race([
          q.initializationResult(),
          new Promise<never>((_, reject) => setTimeout(() => reject(new Error("no answer within 30 s")), 30_000).unref())
        ]),
      catch: (error) => new AdapterError({ reason: "start_failed", message: `Claude Code did not start: ${String(error)}` })
    })

    const ensureAlive = Effect.suspend(() => (exited ? fail("provider_exited", "the Claude Code process has exited") : Effect.void))
    const control = <A>(what: string, run: () => Promise<A>) =>
      Effect.tryPromise({ try: run, catch: (error) => new AdapterError({ reason: "protocol", message: `${what} failed: ${String(error)}` }) })
    const find = (predicate: (r: OpenRequest) => boolean) => mapper.openRequests().find(predicate)

    const setMode = (mode: OperatingMode) =>
      Effect.gen(function* () {
        yield* ensureAlive
        const target = nativeMode(mode)
        if (target === undefined) return yield* fail("unsupported", `Claude has no ${mode} mode`)
        yield* record(local({ _local: "setPermissionMode", mode: target })).pipe(Effect.mapError((e) => new AdapterError({ reason: "protocol", message: e.message })))
        yield* control("setPermissionMode", () => q.setPermissionMode(target))
      })

    const decidePlanRequest = (request: OpenRequest, plan: Omit<PlanDecisionInput, "planId">) => {
      if (plan.decision === "edited" && plan.editedMarkdown === undefined) return fail("invalid_answer", "an edited plan needs editedMarkdown")
      const decision: Decision = {
        kind: "plan",
        decision: plan.decision,
        ...(plan.feedback !== undefined ? { feedback: plan.feedback } : {}),
        ...(plan.decision === "edited" && plan.editedMarkdown !== undefined ? { editedMarkdown: plan.editedMarkdown } : {})
      }
      const native: NativeDecision =
        plan.decision === "rejected"
          ? { behavior: "deny", message: plan.feedback ?? "The user rejected the plan. Keep planning." }
          : { behavior: "allow", patch: plan.decision === "edited" ? { plan: plan.editedMarkdown } : {} }
      return decide(request, decision, native)
    }

    const session: ProviderSession = {
      provider: "claude",
      threadId: input.threadId,
      capabilities: Effect.succeed(CLAUDE_CAPABILITIES),
      mode: Effect.sync(() => canonicalMode(mapper.nativeMode)),
      startTurn: (turn) =>
        Effect.gen(function* () {
          yield* ensureAlive
          if (turn.mode !== undefined && turn.mode !== canonicalMode(mapper.nativeMode)) yield* setMode(turn.mode)
          const turnId = `claude-turn-${randomUUID()}` as TurnId
          yield* lock.withPermit(
            Effect.gen(function* () {
              // A second message would be queued by the CLI behind the running turn and look like its output.
              if (mapper.currentTurn !== undefined) return yield* fail("busy", "a turn is already running")
              interruptRequested = false
              yield* recordUnlocked(local({ _local: "user", turnId, text: turn.text })).pipe(
                Effect.mapError((e) => new AdapterError({ reason: "protocol", message: e.message }))
              )
              yield* Queue.offer(inbox, { type: "user", message: { role: "user", content: turn.text }, parent_tool_use_id: null })
            })
          )
          return turnId
        }),
      interrupt: () =>
        Effect.gen(function* () {
          yield* ensureAlive
          interruptRequested = true
          yield* record(local({ _local: "interrupt" })).pipe(Effect.mapError((e) => new AdapterError({ reason: "protocol", message: e.message })))
          yield* control("interrupt", () => q.interrupt())
        }),
      setMode,
      respondToUserInput: (answer: UserInputAnswer) =>
        Effect.gen(function* () {
          const request = find((r) => r.prompt?.promptId === answer.promptId)
          if (request?.prompt === undefined) return yield* fail("prompt_not_pending", `prompt ${answer.promptId} is not pending`)
          const checked = validateAnswer(request.prompt, answer)
          if (!checked.ok) return yield* fail("invalid_answer", `${checked.error.message} at ${JSON.stringify(checked.error.path)}`)
          yield* decide(
            request,
            {
              kind: "prompt",
              resolution: checked.entries.length > 0 ? "answered" : "empty",
              answers: redactAnswerEntries(request.prompt, answer.answers)
            },
            (() => {
              const { answers, annotations } = nativeAnswers(checked.entries)
              return { behavior: "allow", patch: { answers, ...(Object.keys(annotations).length > 0 ? { annotations } : {}) } } as const
            })()
          )
        }),
      dismissUserInput: (promptId: PromptId, resolution) =>
        Effect.gen(function* () {
          const request = find((r) => r.prompt?.promptId === promptId)
          if (request === undefined) return yield* fail("prompt_not_pending", `prompt ${promptId} is not pending`)
          yield* decide(
            request,
            { kind: "prompt", resolution, answers: [] },
            // Allowing without answers tells the model the user did not answer.
            resolution === "empty" ? { behavior: "allow", patch: {} } : { behavior: "deny", message: "The user cancelled the question." }
          )
        }),
      respondToRequest: (requestId: RequestId, optionId: OptionId) =>
        Effect.gen(function* () {
          const request = find((r) => r.requestId === requestId)
          if (request === undefined) return yield* fail("request_not_pending", `request ${requestId} is not pending`)
          if (request.kind === "question") return yield* fail("unsupported", "answer questions with respondToUserInput")
          if (request.kind === "plan") {
            if (optionId !== "approve" && optionId !== "reject") return yield* fail("invalid_answer", `unknown option ${optionId}`)
            return yield* decidePlanRequest(request, { decision: optionId === "approve" ? "approved" : "rejected" })
          }
          if (optionId !== "allow" && optionId !== "deny") return yield* fail("invalid_answer", `unknown option ${optionId}`)
          yield* decide(
            request,
            { kind: "approval", optionId: optionId === "allow" ? "allow" : "deny" },
            optionId === "allow" ? { behavior: "allow", patch: {} } : { behavior: "deny", message: "The user denied this tool call." }
          )
        }),
      decidePlan: (plan) =>
        Effect.gen(function* () {
          const request = find((r) => r.planId === plan.planId)
          if (request === undefined) return yield* fail("prompt_not_pending", `plan ${plan.planId} is not pending`)
          yield* decidePlanRequest(request, plan)
        })
    }
    return session
  })

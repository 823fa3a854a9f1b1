import type { PromptId, ResolvedBy, UserInputAnswerEntry, UserInputPrompt, WaitPolicy } from "@planbridge/contracts"
import { Context, Effect, Fiber, Layer, Option, PubSub, type Scope } from "effect"
import type { RuntimeIngestion, StoredEvent } from "./RuntimeIngestion.ts"
import type { SessionCommands } from "./RoutedCommands.ts"

/**
 * The server-owned wait policy (issue 29). A question waits for a person (`wait`, the default)
 * or, under `after`, is resolved by the server once its time has passed: the timer is the
 * server's, on the replica that runs the session, not a client's that happens to be open (the
 * complaint about peers whose TUI answered `{}` after a timeout: silence became a decision
 * nobody could trace). The resolution goes through the same answer path as a person's, recorded
 * as `resolvedBy: {actor: "policy"}`; a person who answers first wins, and the timer is dropped.
 */

/** The server's policy for sessions that do not name their own (`serve --wait-policy`). */
export class ServerWaitPolicy extends Context.Service<ServerWaitPolicy, WaitPolicy>()("planbridge/ServerWaitPolicy") {
  static readonly layer = (policy: WaitPolicy) => Layer.succeed(ServerWaitPolicy, policy)
}

export const WAIT: WaitPolicy = { kind: "wait" }

const POLICY: ResolvedBy = { actor: "policy" }

/** What a policy does with one prompt: an answer of recommended options, or a resolution without one. */
export type PolicyAction =
  | { readonly kind: "respond"; readonly answers: ReadonlyArray<UserInputAnswerEntry> }
  | { readonly kind: "dismiss"; readonly resolution: "empty" | "cancelled" }

/**
 * The action of `then` on `prompt`. A prompt with a secret question is only ever resolved
 * `empty`: a policy never makes up a secret. `recommended` answers each question with its
 * recommended options; a required question without one leaves nothing to recommend, so the
 * prompt is resolved `empty` rather than answered with a guess.
 */
export const policyAction = (prompt: UserInputPrompt, then: "empty" | "recommended" | "cancel"): PolicyAction => {
  if (prompt.questions.some((q) => q.secret)) return { kind: "dismiss", resolution: "empty" }
  if (then === "cancel") return { kind: "dismiss", resolution: "cancelled" }
  if (then === "empty") return { kind: "dismiss", resolution: "empty" }
  const answers: Array<UserInputAnswerEntry> = []
  for (const question of prompt.questions) {
    const recommended = question.options.filter((o) => o.recommended === true).map((o) => o.id)
    const chosen = question.multiSelect ? recommended : recommended.slice(0, 1)
    if (chosen.length > 0) answers.push({ questionId: question.id, selectedOptionIds: chosen })
    else if (question.required) return { kind: "dismiss", resolution: "empty" }
  }
  return answers.length === 0 ? { kind: "dismiss", resolution: "empty" } : { kind: "respond", answers }
}

/**
 * Runs the policy timers of this replica's sessions for as long as the scope lives: each prompt
 * of a local session whose policy is `after` gets one, dropped when the prompt is resolved.
 * `policyOf(threadId)`: the session's own policy, else the server's.
 */
export const runWaitPolicies = (deps: {
  readonly ingestion: RuntimeIngestion["Service"]
  readonly isLocal: (threadId: string) => boolean
  readonly policyOf: (threadId: string) => WaitPolicy
  readonly commands: Pick<SessionCommands, "respondToUserInput" | "dismissUserInput">
}): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function* () {
    const timers = new Map<string, Fiber.Fiber<void>>()
    const scope = yield* Effect.scope

    /** Resolves the prompt as the policy says; a person who answered meanwhile is no failure. */
    const resolve = (promptId: PromptId, prompt: UserInputPrompt, then: "empty" | "recommended" | "cancel") => {
      const action = policyAction(prompt, then)
      // One id per prompt: the policy's attempt is idempotent like any client's.
      const clientRequestId = `policy:${promptId}`
      const run =
        action.kind === "respond"
          ? deps.commands.respondToUserInput(promptId, action.answers, clientRequestId, POLICY)
          : deps.commands.dismissUserInput(promptId, action.resolution, clientRequestId, POLICY)
      return run.pipe(
        Effect.asVoid,
        Effect.catch((error) =>
          "code" in error && error.code === "already_resolved"
            ? Effect.void
            : Effect.logWarning(`wait policy: prompt ${promptId} could not be resolved: ${error.message}`)
        )
      )
    }

    const onEvent = (event: StoredEvent) =>
      Effect.gen(function* () {
        const e = event.event
        if (e.type === "user-input.resolved") {
          const timer = timers.get(e.payload.promptId)
          timers.delete(e.payload.promptId)
          if (timer !== undefined) yield* Fiber.interrupt(timer)
          return
        }
        if (e.type !== "user-input.requested" || !deps.isLocal(e.threadId)) return
        const policy = deps.policyOf(e.threadId)
        if (policy.kind !== "after") return
        const { prompt } = e.payload
        const timer = yield* Effect.sleep(policy.afterMs).pipe(
          Effect.andThen(Effect.sync(() => timers.delete(prompt.promptId))),
          Effect.andThen(resolve(prompt.promptId, prompt, policy.then)),
          Effect.forkIn(scope)
        )
        timers.set(prompt.promptId, timer)
      })

    // Every committed event stays in the store's PubSub until each subscriber has taken it, so
    // this one takes whatever is waiting at once and looks only at the prompts' events: taken one
    // by one, a burst's events (a big line's 1 MiB pieces, each keeping its whole line alive) were
    // held for as long as this fiber needed to step through them, and each cost an effect.
    const onCommitted = (committed: ReadonlyArray<StoredEvent>) => {
      const prompts = committed.filter(
        ({ event }) => event.type === "user-input.requested" || event.type === "user-input.resolved"
      )
      return prompts.length === 0 ? Effect.void : Effect.forEach(prompts, onEvent, { discard: true })
    }
    const events = yield* deps.ingestion.subscribe
    yield* Effect.forkScoped(Effect.forever(Effect.flatMap(PubSub.takeAll(events), onCommitted)))
  })

/** The server's policy when one is configured, else `wait`. */
export const serverWaitPolicy = Effect.map(
  Effect.serviceOption(ServerWaitPolicy),
  Option.getOrElse(() => WAIT)
)

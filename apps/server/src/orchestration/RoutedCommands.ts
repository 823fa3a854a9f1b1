import type {
  OperatingMode,
  OptionId,
  PlanId,
  PromptId,
  RequestId,
  ResolvedBy,
  ThreadId,
  UserInputAnswerEntry
} from "@planbridge/contracts"
import { Effect } from "effect"
import type { AnswerTargets } from "../persistence/AnswerTargets.ts"
import type { StoreError } from "../persistence/StoreError.ts"
import { definedFields } from "../util/definedFields.ts"
import type { ResolutionOutcome } from "./ClientRequests.ts"
import type { CommandError } from "./CommandErrors.ts"
import type { RelayedCommand, ReplicaRouting } from "./ReplicaRouting.ts"

type SessionError = CommandError | StoreError

/** A client's decision on a proposed plan (`plan.decide`). */
export interface PlanDecision {
  readonly threadId: ThreadId
  readonly planId: PlanId
  readonly decision: "approved" | "rejected" | "edited"
  readonly feedback?: string
  readonly editedMarkdown?: string
  /** One of the agent's own review choices (`supportsPlanOptions`). */
  readonly optionId?: OptionId
}

/**
 * The commands on a live session, as the replica that runs it carries them out. Answer-like
 * commands carry who sent them (`by`): their resolutions record it (ResolutionAttribution.ts).
 */
export interface SessionCommands {
  readonly startTurn: (
    threadId: ThreadId,
    text: string,
    mode?: OperatingMode
  ) => Effect.Effect<{ turnId: string }, SessionError>
  /** What the interrupt cancels records `by`. */
  readonly interrupt: (threadId: ThreadId, by: ResolvedBy) => Effect.Effect<{ interrupted: true }, SessionError>
  readonly setMode: (threadId: ThreadId, mode: OperatingMode) => Effect.Effect<{ mode: OperatingMode }, SessionError>
  readonly respondToUserInput: (
    promptId: PromptId,
    answers: ReadonlyArray<UserInputAnswerEntry>,
    clientRequestId: string,
    by: ResolvedBy
  ) => Effect.Effect<ResolutionOutcome, SessionError>
  readonly dismissUserInput: (
    promptId: PromptId,
    resolution: "empty" | "cancelled",
    clientRequestId: string,
    by: ResolvedBy
  ) => Effect.Effect<ResolutionOutcome, SessionError>
  readonly respondToRequest: (
    requestId: RequestId,
    optionId: OptionId,
    clientRequestId: string,
    by: ResolvedBy
  ) => Effect.Effect<ResolutionOutcome, SessionError>
  readonly decidePlan: (
    input: PlanDecision,
    clientRequestId: string,
    by: ResolvedBy
  ) => Effect.Effect<ResolutionOutcome, SessionError>
}

/**
 * The session commands as clients get them: each runs here when the thread's session is here
 * (or nowhere), else is relayed to the replica that owns it (`routing`); `runRelayed` is what
 * this replica does with a command another replica relayed to it — the local path, never relayed
 * again. Answers find their thread through the prompt or request they answer. With replicas,
 * an answer's `by` names the replica that took it from its client (`replicaId`), and the owner
 * records a relayed one as `via: relay`, the client's own channel as `relayedVia`. On a single
 * server (`routing.replicated` false) the commands are the local ones as they are: no answer
 * looks up its thread first (the local path reads its prompt or request once, itself).
 */
export const routeSessionCommands = (
  routing: ReplicaRouting,
  targets: AnswerTargets["Service"],
  local: SessionCommands,
  replicaId: string | undefined
) => {
  const runRelayed = relayedRunner(local)
  if (!routing.replicated) return { routed: local, runRelayed }
  const taken = (by: ResolvedBy): ResolvedBy =>
    replicaId === undefined || by.replica !== undefined ? by : { ...by, replica: replicaId }
  const viaPrompt = <A>(promptId: string, run: (threadId: string | undefined) => Effect.Effect<A, SessionError>) =>
    Effect.flatMap(targets.prompt(promptId), (target) => run(target?.threadId))
  const routed: SessionCommands = {
    startTurn: (threadId, text, mode) =>
      routing.route(
        threadId,
        { type: "turn.start", threadId, text, ...definedFields({ mode }) },
        local.startTurn(threadId, text, mode)
      ),
    interrupt: (threadId, sender) => {
      const by = taken(sender)
      return routing.route(threadId, { type: "turn.interrupt", threadId }, local.interrupt(threadId, by), by)
    },
    setMode: (threadId, mode) =>
      routing.route(threadId, { type: "mode.set", threadId, mode }, local.setMode(threadId, mode)),
    respondToUserInput: (promptId, answers, clientRequestId, sender) =>
      viaPrompt(promptId, (threadId) => {
        const by = taken(sender)
        const here = local.respondToUserInput(promptId, answers, clientRequestId, by)
        const command = { type: "userInput.respond", promptId, answers, clientRequestId } as const
        return threadId === undefined ? here : routing.route(threadId, command, here, by)
      }),
    dismissUserInput: (promptId, resolution, clientRequestId, sender) =>
      viaPrompt(promptId, (threadId) => {
        const by = taken(sender)
        const here = local.dismissUserInput(promptId, resolution, clientRequestId, by)
        const command = { type: "userInput.dismiss", promptId, resolution, clientRequestId } as const
        return threadId === undefined ? here : routing.route(threadId, command, here, by)
      }),
    respondToRequest: (requestId, optionId, clientRequestId, sender) =>
      Effect.flatMap(targets.request(requestId), (target) => {
        const by = taken(sender)
        const here = local.respondToRequest(requestId, optionId, clientRequestId, by)
        const command = { type: "request.respond", requestId, optionId, clientRequestId } as const
        return target === undefined ? here : routing.route(target.threadId, command, here, by)
      }),
    decidePlan: (input, clientRequestId, sender) => {
      const by = taken(sender)
      return routing.route(
        input.threadId,
        { type: "plan.decide", ...input, clientRequestId },
        local.decidePlan(input, clientRequestId, by),
        by
      )
    }
  }

  return { routed, runRelayed }
}

/** What this replica does with a command another replica relayed to it: the local path, never relayed again. */
const relayedRunner = (local: SessionCommands) => {
  /** What the owner records of an answer another replica took from its client. */
  const relayedBy = (by: ResolvedBy | undefined): ResolvedBy => {
    if (by === undefined) return { actor: "user", via: "relay" }
    const { via, ...rest } = by
    return via === undefined || via === "relay" ? { ...rest, via: "relay" } : { ...rest, via: "relay", relayedVia: via }
  }

  return (command: RelayedCommand, sender: ResolvedBy | undefined): Effect.Effect<object, SessionError> => {
    const by = relayedBy(sender)
    switch (command.type) {
      case "turn.start":
        return local.startTurn(command.threadId, command.text, command.mode)
      case "turn.interrupt":
        return local.interrupt(command.threadId, by)
      case "mode.set":
        return local.setMode(command.threadId, command.mode)
      case "userInput.respond":
        return local.respondToUserInput(command.promptId, command.answers, command.clientRequestId, by)
      case "userInput.dismiss":
        return local.dismissUserInput(command.promptId, command.resolution, command.clientRequestId, by)
      case "request.respond":
        return local.respondToRequest(command.requestId, command.optionId, command.clientRequestId, by)
      case "plan.decide": {
        const { type: _t, clientRequestId, ...input } = command
        return local.decidePlan(input, clientRequestId, by)
      }
    }
  }
}

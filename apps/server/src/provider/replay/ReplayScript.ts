import type {
  OperatingMode,
  OptionId,
  PlanDecisionKind,
  PlanId,
  PromptId,
  RequestId,
  RuntimeEvent,
  UserInputAnswerEntry
} from "@planbridge/contracts"

/**
 * A recorded session's canonical events cut where the recording waited for its client: each
 * segment after the first is opened by a gate, the client command the recorded client sent there
 * (a turn, an answer, a dismissal, an approval's option, a plan decision, an interrupt, a mode
 * switch), and holds what the provider did until the next one. Pure: the replay session plays it.
 */

/** What the recorded client did at a gate. */
export type Gate =
  | { readonly kind: "turn"; readonly mode: OperatingMode | undefined; readonly text: string | undefined }
  | { readonly kind: "mode"; readonly mode: OperatingMode }
  | { readonly kind: "answer"; readonly promptId: PromptId; readonly answers: ReadonlyArray<UserInputAnswerEntry> }
  | { readonly kind: "dismiss"; readonly promptId: PromptId; readonly resolution: "empty" | "cancelled" }
  | { readonly kind: "request"; readonly requestId: RequestId; readonly optionId: OptionId }
  | {
      readonly kind: "plan"
      readonly planId: PlanId
      readonly decision: PlanDecisionKind
      readonly feedback: string | undefined
      readonly editedMarkdown: string | undefined
    }
  | { readonly kind: "interrupt" }

/** Events recorded at one instant, persisted together; `atMs` is their recorded time. */
export interface Burst {
  readonly atMs: number
  readonly events: ReadonlyArray<RuntimeEvent>
}

export interface Segment {
  /** Undefined only for the first segment: what the session did when it started. */
  readonly gate: Gate | undefined
  readonly bursts: ReadonlyArray<Burst>
}

/** Events that only follow an interrupt, looked past to find whether a cancellation was one. */
const AFTERMATH = new Set<RuntimeEvent["type"]>(["user-input.resolved", "request.resolved", "session.state.changed"])

/** Whether the cancellation at `index` is the recorded client's interrupt: the turn ends interrupted right after. */
const endsInterrupted = (events: ReadonlyArray<RuntimeEvent>, index: number): boolean => {
  for (let i = index + 1; i < events.length; i++) {
    const next = events[i]!
    if (next.type === "turn.completed") return next.payload.status === "interrupted"
    if (!AFTERMATH.has(next.type)) return false
  }
  return false
}

/** The text of the turn's recorded user message, when the provider reports one. */
const userTextOf = (events: ReadonlyArray<RuntimeEvent>, index: number, turnId: string): string | undefined => {
  for (let i = index + 1; i < events.length; i++) {
    const next = events[i]!
    if (next.type === "turn.started" || next.type === "turn.completed") return undefined
    if (next.type === "item.completed" && next.turnId === turnId && next.payload.itemType === "user_message")
      return next.payload.text
  }
  return undefined
}

/**
 * The recording without its closing: the `session.exited` of a recorder ending the session
 * after its last turn (graceful, or killed when it ended an ACP agent), and what followed it.
 * An exit that ended a turn (`failed`) is the scenario's own and is played. A replayed session
 * stays live after its last turn, as the provider would, until it is closed.
 */
export const beforeClosingExit = (recorded: ReadonlyArray<RuntimeEvent>): ReadonlyArray<RuntimeEvent> => {
  const exit = recorded.findLastIndex((e) => e.type === "session.exited")
  const exited = recorded[exit]
  if (exited?.type !== "session.exited" || !["graceful", "killed"].includes(exited.payload.exitKind)) return recorded
  const before = recorded.slice(0, exit)
  const lastTurn = before.findLast((e) => e.type === "turn.started" || e.type === "turn.completed")
  const idle = lastTurn === undefined || (lastTurn.type === "turn.completed" && lastTurn.payload.status !== "failed")
  return idle ? before : recorded
}

/** The recorded session → its segments (see `beforeClosingExit` for its end). */
export const scriptOf = (recorded: ReadonlyArray<RuntimeEvent>): ReadonlyArray<Segment> => {
  const events = beforeClosingExit(recorded)
  const segments: Array<{ gate: Gate | undefined; events: Array<RuntimeEvent> }> = [{ gate: undefined, events: [] }]
  /** A request resolved under a gate already opened for its prompt or plan. */
  const covered = new Set<string>()
  const requestOf = new Map<string, RequestId>()
  let inTurn = false
  let seenTurn = false
  let interrupted = false
  const open = (gate: Gate) => segments.push({ gate, events: [] })
  for (const [index, event] of events.entries()) {
    switch (event.type) {
      case "turn.started":
        inTurn = seenTurn = true
        interrupted = false
        open({ kind: "turn", mode: event.payload.mode, text: userTextOf(events, index, event.turnId) })
        break
      case "turn.completed":
        if (event.payload.status === "interrupted" && !interrupted) open({ kind: "interrupt" })
        inTurn = false
        break
      case "mode.changed":
        // Between turns it is the client's mode switch; in a turn (or at start) the provider's.
        if (seenTurn && !inTurn) open({ kind: "mode", mode: event.payload.mode })
        break
      case "request.opened": {
        const { promptId, requestId } = event.payload
        if (promptId !== undefined) requestOf.set(promptId, requestId)
        break
      }
      case "plan.decision": {
        const { planId, decision, feedback, editedMarkdown } = event.payload
        open({ kind: "plan", planId, decision, feedback, editedMarkdown })
        // The plan approval's own request resolution, right after its decision, belongs to it.
        const next = events[index + 1]
        if (next?.type === "request.resolved") covered.add(next.payload.requestId)
        break
      }
      case "user-input.resolved": {
        const { promptId, resolution, answers } = event.payload
        const request = requestOf.get(promptId)
        if (resolution === "answered") open({ kind: "answer", promptId, answers })
        else if (resolution === "empty") open({ kind: "dismiss", promptId, resolution })
        else if (resolution === "cancelled") {
          if (endsInterrupted(events, index)) {
            if (!interrupted) open({ kind: "interrupt" })
            interrupted = true
          } else open({ kind: "dismiss", promptId, resolution })
        } else break
        if (request !== undefined) covered.add(request)
        break
      }
      case "request.resolved": {
        const { requestId, resolution, optionId } = event.payload
        if (covered.has(requestId)) break
        if (resolution === "responded" && optionId !== undefined) open({ kind: "request", requestId, optionId })
        else if (resolution === "cancelled" && endsInterrupted(events, index) && !interrupted) {
          open({ kind: "interrupt" })
          interrupted = true
        }
        break
      }
      default:
        break
    }
    segments.at(-1)!.events.push(event)
  }
  return segments.map(({ gate, events }) => ({ gate, bursts: burstsOf(events) }))
}

/** Consecutive events with one recorded time are one burst. */
const burstsOf = (events: ReadonlyArray<RuntimeEvent>): ReadonlyArray<Burst> => {
  const bursts: Array<{ atMs: number; events: Array<RuntimeEvent> }> = []
  for (const event of events) {
    const atMs = Date.parse(event.createdAt)
    const current = bursts.at(-1)
    if (current !== undefined && current.atMs === atMs) current.events.push(event)
    else bursts.push({ atMs, events: [event] })
  }
  return bursts
}

/** A gate in words, for refusals and warnings ("an answer to prompt …"). */
export const describeGate = (gate: Gate): string => {
  switch (gate.kind) {
    case "turn":
      return gate.text === undefined ? "a new turn" : `a new turn with ${JSON.stringify(gate.text)}`
    case "mode":
      return `a switch to mode '${gate.mode}'`
    case "answer":
      return `an answer to prompt '${gate.promptId}'`
    case "dismiss":
      return `prompt '${gate.promptId}' dismissed (${gate.resolution})`
    case "request":
      return `option '${gate.optionId}' on request '${gate.requestId}'`
    case "plan":
      return `plan '${gate.planId}' ${gate.decision}`
    case "interrupt":
      return "an interrupt"
  }
}

import type { UserInputAnswerEntry } from "@planbridge/contracts"
import { isDeepStrictEqual } from "node:util"
import type { AdapterErrorKind } from "../ProviderAdapter.ts"
import { describeGate, type Gate } from "./ReplayScript.ts"

/**
 * A client command held against the gate a replayed session waits at (pure): the command the
 * recording has there passes; the same command with other values (another option, other text)
 * passes with its differences named, which a strict replay refuses; any other command is refused.
 */

/**
 * A client command as the replay session receives it: what the recorded client did at a gate
 * has the same shape (a turn's recorded text is unknown for providers that do not report it).
 */
export type ReplayCommand = Gate

export type GateMatch =
  | { readonly ok: true; readonly differences: ReadonlyArray<string> }
  | { readonly ok: false; readonly reason: AdapterErrorKind; readonly message: string }

/** The target a command or gate is about: a prompt, a request, a plan, or the session itself. */
const targetOf = (step: Gate | ReplayCommand): string => {
  switch (step.kind) {
    case "answer":
    case "dismiss":
      return `prompt ${step.promptId}`
    case "request":
      return `request ${step.requestId}`
    case "plan":
      return `plan ${step.planId}`
    default:
      return step.kind
  }
}

/** An answer per question, comparable: option ids sorted, text as given; redacted entries say nothing. */
const answerMap = (answers: ReadonlyArray<UserInputAnswerEntry>) =>
  new Map(
    answers
      .filter((entry) => entry.redacted !== true)
      .map((entry) => [entry.questionId, { options: [...(entry.selectedOptionIds ?? [])].sort(), text: entry.text }])
  )

const answerDifferences = (
  recorded: ReadonlyArray<UserInputAnswerEntry>,
  given: ReadonlyArray<UserInputAnswerEntry>
): ReadonlyArray<string> => {
  const redacted = new Set(recorded.filter((e) => e.redacted === true).map((e) => e.questionId))
  const want = answerMap(recorded)
  const got = answerMap(given.filter((e) => !redacted.has(e.questionId)))
  const ids = [...new Set([...want.keys(), ...got.keys()])]
  return ids.flatMap((id) => {
    const a = want.get(id)
    const b = got.get(id)
    if (isDeepStrictEqual(a, b)) return []
    return [`question '${id}' answered ${JSON.stringify(b ?? null)}, recorded ${JSON.stringify(a ?? null)}`]
  })
}

const differ = (what: string, given: unknown, recorded: unknown): ReadonlyArray<string> =>
  isDeepStrictEqual(given, recorded) ? [] : [`${what} ${JSON.stringify(given)}, recorded ${JSON.stringify(recorded)}`]

const valueDifferences = (gate: Gate, command: ReplayCommand): ReadonlyArray<string> => {
  if (gate.kind === "turn" && command.kind === "turn")
    return [
      ...(gate.text === undefined ? [] : differ("turn text", command.text, gate.text)),
      ...(command.mode === undefined || gate.mode === undefined ? [] : differ("turn mode", command.mode, gate.mode))
    ]
  if (gate.kind === "mode" && command.kind === "mode") return differ("mode", command.mode, gate.mode)
  if (gate.kind === "answer" && command.kind === "answer") return answerDifferences(gate.answers, command.answers)
  if (gate.kind === "answer" && command.kind === "dismiss")
    return [`prompt dismissed (${command.resolution}), recorded answered`]
  if (gate.kind === "dismiss" && command.kind === "answer") return [`prompt answered, recorded ${gate.resolution}`]
  if (gate.kind === "dismiss" && command.kind === "dismiss")
    return differ("prompt dismissed", command.resolution, gate.resolution)
  if (gate.kind === "request" && command.kind === "request") return differ("option", command.optionId, gate.optionId)
  if (gate.kind === "plan" && command.kind === "plan")
    return [
      ...differ("plan decision", command.decision, gate.decision),
      ...differ("plan feedback", command.feedback ?? null, gate.feedback ?? null),
      ...differ("edited plan", command.editedMarkdown ?? null, gate.editedMarkdown ?? null)
    ]
  return []
}

/**
 * Whether `command` is what the recording does at `gate` (`undefined`: the recording is still
 * playing, or has ended). Refused otherwise, with what the recording waits for.
 */
export const matchGate = (gate: Gate | undefined, command: ReplayCommand, ended: boolean): GateMatch => {
  if (gate === undefined)
    return ended
      ? { ok: false, reason: "unsupported", message: "the recording has ended: it has nothing more to play" }
      : { ok: false, reason: "busy", message: "the recording is playing; it takes no command before its next one" }
  if (targetOf(gate) !== targetOf(command)) {
    const answering = command.kind === "answer" || command.kind === "dismiss" || command.kind === "request"
    const reason: AdapterErrorKind = answering ? "invalid_answer" : command.kind === "turn" ? "busy" : "unsupported"
    return { ok: false, reason, message: `the recording waits for ${describeGate(gate)}` }
  }
  return { ok: true, differences: valueDifferences(gate, command) }
}

import { redactAnswerEntries, type PromptResolutionKind } from "@planbridge/contracts"
import type { CheckedAnswer } from "../kernel/CheckedAnswer.ts"
import { lineTooLongMessage } from "../lines.ts"
import { adapterError, type AdapterError, type PlanDecisionInput } from "../ProviderAdapter.ts"
import type { NativeReplies } from "../kernel/Answers.ts"
import { elicitationAnswerDecision } from "./ClaudeElicitation.ts"
import { nativeAnswers } from "./ClaudePrompts.ts"
import type { ClaudeRequest, Outcome } from "./ClaudeRequests.ts"
import type { Decision } from "./ClaudeTranscript.ts"
import { definedFields } from "../../util/definedFields.ts"

/**
 * Our decisions on Claude's requests, pure: the decision recorded (a transcript line) and what
 * the waiting `canUseTool` callback hands back to the CLI. ClaudeSession.ts records the first
 * and, only once it is durable, gives the CLI the second.
 */

/** What the `canUseTool` callback hands back, completed with the input the CLI gave it. */
export type NativeDecision =
  | { readonly behavior: "allow"; readonly patch: Record<string, unknown> }
  | { readonly behavior: "deny"; readonly message: string }

export interface DecisionPair {
  readonly decision: Decision
  readonly native: NativeDecision
}

/** What the CLI is told for a call no request could be opened (or recorded) for. */
export const COULD_NOT_PRESENT = {
  behavior: "deny",
  message: "Planbridge could not present this request."
} as const satisfies NativeDecision

/** What the CLI is told for a request that closed without a decision of ours. */
export const nativeForOutcome = (outcome: Outcome): NativeDecision =>
  outcome.kind === "exited"
    ? { behavior: "deny", message: "The Claude Code process exited." }
    : outcome.kind === "prompt" && outcome.resolution === "answered"
      ? // Only a URL elicitation completed before it was opened here: done, as opened.
        { behavior: "allow", patch: { action: "accept" } }
      : { behavior: "deny", message: "The request was cancelled." }

/**
 * An answer to an AskUserQuestion prompt (already checked against it). `unanswered`: the session
 * advertises `UNANSWERED_CAPABILITY`, so a question the answer leaves out is marked `skipped`.
 */
export const answerDecision = (
  prompt: NonNullable<ClaudeRequest["prompt"]>,
  checked: CheckedAnswer,
  unanswered: boolean
): DecisionPair => {
  const { answers, annotations } = nativeAnswers(checked.entries, unanswered ? { prompt, how: "skipped" } : undefined)
  return {
    decision: {
      kind: "prompt",
      resolution: checked.entries.length > 0 ? "answered" : "empty",
      answers: redactAnswerEntries(prompt, checked.answer.answers)
    },
    native: { behavior: "allow", patch: { answers, ...(Object.keys(annotations).length > 0 ? { annotations } : {}) } }
  }
}

/**
 * A prompt resolved without answers: `empty` allows (the model learns nobody answered; where the
 * session advertises `UNANSWERED_CAPABILITY`, each question marked `dismissed`), `cancelled` denies.
 */
export const dismissDecision = (
  resolution: Extract<PromptResolutionKind, "empty" | "cancelled">,
  unanswered: { readonly prompt: NonNullable<ClaudeRequest["prompt"]> } | undefined
): DecisionPair => {
  const marked =
    unanswered === undefined ? undefined : nativeAnswers([], { prompt: unanswered.prompt, how: "dismissed" })
  return {
    decision: { kind: "prompt", resolution, answers: [] },
    native:
      resolution === "cancelled"
        ? { behavior: "deny", message: "The user cancelled the question." }
        : { behavior: "allow", patch: marked === undefined ? {} : { ...marked } }
  }
}

/** A decision on an ExitPlanMode request, or the refusal of an edit without its markdown. */
const planDecision = (plan: Omit<PlanDecisionInput, "planId">): DecisionPair | AdapterError => {
  if (plan.decision === "edited" && plan.editedMarkdown === undefined)
    return adapterError("invalid_answer", "an edited plan needs editedMarkdown")
  return {
    decision: {
      kind: "plan",
      decision: plan.decision,
      ...definedFields({
        feedback: plan.feedback,
        editedMarkdown: plan.decision === "edited" ? plan.editedMarkdown : undefined
      })
    },
    native:
      plan.decision === "rejected"
        ? { behavior: "deny", message: plan.feedback ?? "The user rejected the plan. Keep planning." }
        : { behavior: "allow", patch: plan.decision === "edited" ? { plan: plan.editedMarkdown } : {} }
  }
}

/** A tool approval: allow or deny. */
export const approvalDecision = (optionId: "allow" | "deny"): DecisionPair => ({
  decision: { kind: "approval", optionId },
  native:
    optionId === "allow"
      ? { behavior: "allow", patch: {} }
      : { behavior: "deny", message: "The user denied this tool call." }
})

/**
 * Our decisions on Claude's open requests (kernel `Answers.ts`). `unanswered`: whether the
 * session advertises `UNANSWERED_CAPABILITY` (read when the answer is made).
 */
export const claudeReplies = (unanswered: () => boolean): NativeReplies<ClaudeRequest, DecisionPair> => ({
  answer: ({ prompt, elicitationFields }, checked) =>
    elicitationFields === undefined
      ? answerDecision(prompt, checked, unanswered())
      : elicitationAnswerDecision(prompt, elicitationFields, checked),
  dismiss: ({ prompt }, resolution) => dismissDecision(resolution, unanswered() ? { prompt } : undefined),
  choose: (request, optionId) => {
    if (request.kind === "prompt") return adapterError("unsupported", "answer questions with respondToUserInput")
    if (request.kind === "plan") {
      if (optionId !== "approve" && optionId !== "reject")
        return adapterError("invalid_answer", `unknown option ${optionId}`)
      return planDecision({ decision: optionId === "approve" ? "approved" : "rejected" })
    }
    if (optionId !== "allow" && optionId !== "deny") return adapterError("invalid_answer", `unknown option ${optionId}`)
    return approvalDecision(optionId === "allow" ? "allow" : "deny")
  },
  decidePlan: (_request, plan) => planDecision(plan)
})

export interface CliEnd {
  /** The shutdown was ours. */
  readonly closing: boolean
  readonly exit: { readonly code: number | null; readonly signal: string | null } | undefined
  /** What the SDK's message stream ended with, if it failed. */
  readonly error: unknown
  /** Set when we ended the CLI for a stdout line over the bound (its length). */
  readonly tooLongBytes: number | undefined
  readonly stderr: string
}

/** How the CLI's end is reported (the `exit` local line): its kind and a message with stderr when it failed. */
export const describeCliEnd = (end: CliEnd) => {
  const { closing, exit, error, tooLongBytes } = end
  const message =
    tooLongBytes !== undefined
      ? lineTooLongMessage("Claude Code", tooLongBytes)
      : error === undefined
        ? undefined
        : error instanceof Error
          ? error.message
          : String(error)
  // Our kill for a line over the bound is no crash of the CLI's own, but the session failed.
  const exitKind =
    tooLongBytes !== undefined
      ? "crashed"
      : closing
        ? "graceful"
        : exit?.signal
          ? "killed"
          : error !== undefined || (exit?.code ?? 0) !== 0
            ? "crashed"
            : "graceful"
  const stderr = end.stderr.trim()
  const detail =
    message === undefined ? undefined : stderr.length > 0 && exitKind !== "graceful" ? `${message}\n${stderr}` : message
  return {
    exitKind,
    exitCode: exit?.code ?? null,
    signal: exit?.signal ?? null,
    ...definedFields({ message: detail })
  } as const
}

import { Schema } from "effect"
import { PlanId } from "./ids.ts"

/**
 * A checklist step. `cancelled` is an addition to the blueprint: Cursor's todos carry it and
 * mapping it to `completed` would lie, dropping the step would lose it.
 */
export const PlanStepStatus = Schema.Literals(["pending", "inProgress", "completed", "cancelled"])
export type PlanStepStatus = typeof PlanStepStatus.Type

export const PlanStep = Schema.Struct({
  step: Schema.String,
  status: PlanStepStatus,
  /** Native step id where the provider has one (Claude tasks, Cursor todos). */
  id: Schema.optionalKey(Schema.String),
  /** Claude's present-continuous label ("Adding tests"). */
  activeForm: Schema.optionalKey(Schema.String),
  /** ACP plan entry priority. */
  priority: Schema.optionalKey(Schema.Literals(["high", "medium", "low"]))
})
export type PlanStep = typeof PlanStep.Type

/**
 * The structured checklist. Every snapshot replaces the previous one entirely: providers send
 * no step ids or revisions, so there is nothing to merge. An empty `steps` clears the list.
 * More than one step `inProgress` is accepted (it is only advice to the model).
 */
export const PlanSnapshot = Schema.Struct({
  explanation: Schema.NullOr(Schema.String),
  steps: Schema.Array(PlanStep),
  source: Schema.Literals(["native", "tool-derived", "synthesized"])
})
export type PlanSnapshot = typeof PlanSnapshot.Type

export const ProposedPlanStatus = Schema.Literals(["streaming", "completed", "approved", "rejected", "superseded"])
export type ProposedPlanStatus = typeof ProposedPlanStatus.Type

/** The hand-off plan (Codex `<proposed_plan>`, Claude ExitPlanMode, Cursor create_plan). */
export const ProposedPlan = Schema.Struct({
  planId: PlanId,
  markdown: Schema.String,
  status: ProposedPlanStatus,
  /** Where the provider wrote it (Claude's plan file). */
  filePath: Schema.optionalKey(Schema.String),
  title: Schema.optionalKey(Schema.String)
})
export type ProposedPlan = typeof ProposedPlan.Type

export const PlanDecisionKind = Schema.Literals(["approved", "rejected", "edited"])
export type PlanDecisionKind = typeof PlanDecisionKind.Type

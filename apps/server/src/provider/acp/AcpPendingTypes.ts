import { OptionId, type PlanId, type RequestId, type TurnId, type UserInputPrompt } from "@planbridge/contracts"
import type { JsonRpcId } from "../kernel/jsonRpcId.ts"
import type { OpenRequest } from "../kernel/OpenRequests.ts"
import type * as N from "./AcpNative.ts"
import type { PlanHandler, QuestionHandler, QuestionRequest } from "./AcpProfile.ts"

/**
 * Agent requests waiting for a person, and our replies to them: the kernel's open requests
 * (`OpenRequests.ts`, keyed by the JSON-RPC id key), with how the agent asked (`wire`) and what
 * its answer needs. ACP closes a request when our answer is written, so `answered` stays false.
 */

export type Reply =
  | { readonly result: unknown }
  | { readonly error: { readonly code: number; readonly message: string; readonly data?: unknown } }

interface PendingBase extends OpenRequest {
  readonly nativeId: JsonRpcId
  readonly method: string
  readonly requestId: RequestId
  readonly turnId: TurnId | undefined
}
export interface PermissionPending extends PendingBase {
  readonly wire: "permission"
  /** `plan` for ExitPlanMode (a `switch_mode` tool call), whose decision is the plan's. */
  readonly kind: "approval" | "plan"
  readonly options: ReadonlyArray<N.PermissionOption>
  readonly planId: PlanId | undefined
}
export interface QuestionPending extends PendingBase {
  readonly wire: "question"
  readonly kind: "prompt"
  readonly prompt: UserInputPrompt
  readonly handler: QuestionHandler
  readonly request: QuestionRequest
}
export interface PlanPending extends PendingBase {
  readonly wire: "plan"
  readonly kind: "plan"
  readonly planId: PlanId
  readonly handler: PlanHandler
}
export type Pending = PermissionPending | QuestionPending | PlanPending

/** Option ids Planbridge shows for a Cursor-style plan request (its wire has no options). */
export const PLAN_ACCEPT = OptionId.make("accept")
export const PLAN_REJECT = OptionId.make("reject")

export const withTurn = (turnId: TurnId | undefined) => (turnId === undefined ? {} : { turnId })

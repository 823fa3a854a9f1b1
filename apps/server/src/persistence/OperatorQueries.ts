import type {
  PlanSnapshot,
  ResolvedBy,
  RuntimeEvent,
  UserInputAnswerEntry,
  UserInputPrompt
} from "@planbridge/contracts"
import { Context, Schema, type Effect } from "effect"
import type { AuditPage, AuditQuery } from "./ResolutionAudit.ts"
import type { StoreError } from "./StoreError.ts"

export class PromptNotFound extends Schema.TaggedError<PromptNotFound>()("PromptNotFound", {
  promptId: Schema.String,
  message: Schema.String
}) {}

export interface PromptFilter {
  readonly status?: "pending" | "resolved"
  readonly provider?: string
  readonly threadId?: string
  /** Only prompts created at least this long ago. */
  readonly olderThanMs?: number
  readonly limit?: number
}

export interface PromptView {
  readonly promptId: string
  readonly threadId: string
  readonly turnId: string | null
  readonly provider: string
  readonly status: "pending" | "resolved"
  readonly resolution: string | null
  readonly prompt: UserInputPrompt
  /** As stored: secret questions only as redaction markers. */
  readonly answers: ReadonlyArray<UserInputAnswerEntry> | null
  readonly reason: string | null
  readonly createdAt: string
  readonly resolvedAt: string | null
  /** Who or what resolved it; null while pending, and for what was resolved before it was recorded. */
  readonly resolvedBy: ResolvedBy | null
}

export interface PromptDetail extends PromptView {
  /** The native request that asked, and where its answer goes. */
  readonly request: {
    readonly requestId: string
    readonly nativeMethod: string
    readonly nativeId: string
    readonly status: string
  } | null
  /** The raw native payload of the request that opened the prompt. */
  readonly raw: RuntimeEvent["raw"] | null
  /** Every event about this prompt or its request, in order. */
  readonly timeline: ReadonlyArray<{ readonly seq: number; readonly threadSeq: number; readonly event: RuntimeEvent }>
}

export interface PlanRevision {
  readonly revision: number
  readonly isLatest: boolean
  readonly plan: PlanSnapshot
  readonly eventId: string
  readonly createdAt: string
}

/** What operators (CLI, HTTP) ask of the persisted state. Reads only. */
export class OperatorQueries extends Context.Service<
  OperatorQueries,
  {
    readonly listPrompts: (filter: PromptFilter) => Effect.Effect<ReadonlyArray<PromptView>, StoreError>
    readonly getPrompt: (promptId: string) => Effect.Effect<PromptDetail, PromptNotFound | StoreError>
    readonly planHistory: (threadId: string, turnId: string) => Effect.Effect<ReadonlyArray<PlanRevision>, StoreError>
    /** A page of the trail of resolutions, in log order (ResolutionAudit.ts). */
    readonly resolutions: (query: AuditQuery) => Effect.Effect<AuditPage, StoreError>
  }
>()("planbridge/OperatorQueries") {}

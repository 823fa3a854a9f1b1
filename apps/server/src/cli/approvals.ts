import { Effect, Schema } from "effect"
import { ago } from "./age.ts"
import { readFileSync } from "node:fs"
import { print, request, run, type Failure, type PromptsTarget } from "./prompts.ts"
import { PendingRequestList, type PendingRequest } from "./promptsApi.ts"
import { definedFields } from "../util/definedFields.ts"

/**
 * `planbridge prompts approvals|respond|decide`: approvals and plan decisions from a terminal,
 * as questions are answered with `prompts answer`, through the running server's operator API.
 */

/** One request as a card: what it asks, its detail, and the options `respond` takes. */
const requestCard = (r: PendingRequest, now: Date): string => {
  const lines = [
    `${r.requestId}  ${r.kind}  ${r.provider}  ${ago(r.createdAt, now)}`,
    `  thread ${r.threadId}`,
    ...(r.title === null ? [] : [`  ${r.title}`]),
    ...(r.detail === null ? [] : r.detail.split("\n").map((l) => `    ${l}`)),
    ...(r.plan === null ? [] : r.plan.markdown.split("\n").map((l) => `    ${l}`)),
    `  options: ${r.options.map((o) => `${o.id} (${o.label})`).join(", ")}`,
    ...(r.plan === null
      ? []
      : [
          `  plan ${r.plan.planId}: prompts decide ${r.plan.planId} --thread ${r.threadId} --decision approved|rejected` +
            (r.plan.supportsFeedback ? " [--feedback TEXT]" : "") +
            (r.plan.supportsEdits ? " (or edited --plan-file FILE)" : "")
        ])
  ]
  return `${lines.join("\n")}\n`
}

export const approvals = (target: PromptsTarget, thread: string | undefined) =>
  run(
    target,
    Effect.gen(function* () {
      const query = thread === undefined ? "" : `?${new URLSearchParams({ threadId: thread })}`
      const reply = yield* request(target, "GET", `/api/requests${query}`)
      const render = (body: PendingRequestList) =>
        body.requests.length === 0
          ? "no approvals or plan decisions waiting\n"
          : body.requests.map((r) => requestCard(r, new Date())).join("\n")
      return yield* print(target, reply, PendingRequestList, render)
    })
  )

export interface RespondInput {
  readonly requestId: string
  readonly option: string
  readonly clientRequestId: string | undefined
}

export const respond = (target: PromptsTarget, input: RespondInput) =>
  run(
    target,
    Effect.gen(function* () {
      const body = { optionId: input.option, ...definedFields({ clientRequestId: input.clientRequestId }) }
      const reply = yield* request(target, "POST", `/api/requests/${encodeURIComponent(input.requestId)}/respond`, body)
      return yield* print(target, reply, Schema.Unknown, () => `responded ${input.requestId} with ${input.option}\n`)
    })
  )

export interface DecideInput {
  readonly planId: string
  readonly thread: string
  readonly decision: "approved" | "rejected" | "edited"
  readonly feedback: string | undefined
  /** With `edited`: the file holding the plan as approved. */
  readonly planFile: string | undefined
  readonly clientRequestId: string | undefined
}

export const decide = (target: PromptsTarget, input: DecideInput) =>
  run(
    target,
    Effect.gen(function* () {
      const editedMarkdown =
        input.planFile === undefined
          ? undefined
          : yield* Effect.try({
              try: () => readFileSync(input.planFile!, "utf8"),
              catch: (e): Failure => ({ code: "bad_plan_file", message: `cannot read ${input.planFile}: ${String(e)}` })
            })
      const body = {
        threadId: input.thread,
        decision: input.decision,
        ...definedFields({ feedback: input.feedback }),
        ...definedFields({ editedMarkdown }),
        ...definedFields({ clientRequestId: input.clientRequestId })
      }
      const reply = yield* request(target, "POST", `/api/plans/${encodeURIComponent(input.planId)}/decide`, body)
      return yield* print(target, reply, Schema.Unknown, () => `${input.decision} ${input.planId}\n`)
    })
  )

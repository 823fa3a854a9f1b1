import type * as acp from "@agentclientprotocol/sdk/unstable"
import type { PlanbridgeClient } from "@planbridge/client"
import { PlanbridgeError } from "@planbridge/client"
import type {
  RequestId,
  RequestOption,
  RuntimeEventOf,
  UserInputAnswerEntry,
  UserInputPrompt
} from "@planbridge/contracts"
import {
  answerOfPermission,
  answersOfForm,
  elicitationForm,
  freeTextFallback,
  questionPermission,
  secretRefusal
} from "./QuestionForms.ts"

/**
 * Puts what a Planbridge thread waits on to the editor, and its reply back to Planbridge: a
 * question card as an elicitation form (or permission requests), an approval or a plan decision
 * as a permission request with the provider's own options. Whoever answers first wins on the
 * server; when that is someone else (the web UI, the CLI, another editor), the editor's open
 * request is cancelled (`$/cancel_request`) and the resolution appears in its stream.
 */

/** What the editor said it can show (`initialize`'s client capabilities). */
export interface EditorCapabilities {
  readonly elicitationForm: boolean
  readonly planUpdates: boolean
}

export interface AskDeps {
  readonly client: PlanbridgeClient
  readonly editor: acp.AgentContext
  readonly sessionId: string
  readonly capabilities: EditorCapabilities
  /** Queues a `session/update` behind the session's earlier ones. */
  readonly update: (update: acp.SessionUpdate) => void
  /**
   * Resolves once the updates queued so far are written: a request goes to the editor after
   * them (a plan approval after its plan, a form after its question's tool call).
   */
  readonly flushed: () => Promise<void>
}

/** What is open on the editor's side: to cancel it, and to describe its resolution. */
interface Open {
  readonly controller: AbortController
  /** The editor replied: its request is settled, there is nothing to cancel any more. */
  replied: boolean
  readonly toolCallId: string
  readonly describe: (answers: ReadonlyArray<UserInputAnswerEntry>, optionId: string | undefined) => string
}

const permissionKind = (kind: RequestOption["kind"]): acp.PermissionOptionKind =>
  kind === undefined || kind === "other" ? "allow_once" : kind

const answeredText = (prompt: UserInputPrompt, answers: ReadonlyArray<UserInputAnswerEntry>): string =>
  answers
    .map((a) => {
      const q = prompt.questions.find((question) => question.id === a.questionId)
      if (a.redacted === true) return `${q?.label ?? a.questionId}: (hidden)`
      const labels = (a.selectedOptionIds ?? []).map((id) => q?.options.find((o) => o.id === id)?.label ?? id)
      return `${q?.label ?? a.questionId}: ${[...labels, ...(a.text === undefined ? [] : [a.text])].join(", ")}`
    })
    .join("\n")

/** Errors that only mean the prompt was resolved meanwhile (by someone else, or with its turn). */
const settledMeanwhile = (error: unknown): boolean =>
  error instanceof PlanbridgeError && (error.code === "already_resolved" || error.code === "unknown_prompt")

/** The fields of an accepted form (none when the editor sent no content). */
const formContent = (response: acp.CreateElicitationResponse): Readonly<Record<string, unknown>> => {
  const content: unknown = "content" in response ? response.content : undefined
  if (typeof content !== "object" || content === null) return {}
  return Object.fromEntries(Object.entries(content))
}

export class EditorAsks {
  private readonly open = new Map<string, Open>()

  constructor(private readonly deps: AskDeps) {}

  /** A question card: a form, permission requests, or a message saying where to answer it. */
  prompt(prompt: UserInputPrompt): void {
    const { deps } = this
    const toolCallId = prompt.promptId
    deps.update({
      sessionUpdate: "tool_call",
      toolCallId,
      title: prompt.title ?? prompt.questions[0].label,
      kind: "think",
      status: "pending"
    })
    const refusal = secretRefusal(prompt)
    const controller = new AbortController()
    // Kept also when nothing is asked here: its resolution still closes the tool call.
    this.open.set(prompt.promptId, {
      controller,
      replied: refusal !== undefined,
      toolCallId,
      describe: (answers) => answeredText(prompt, answers)
    })
    if (refusal !== undefined) return this.say(toolCallId, `Not asked here: ${refusal}`)
    const asking = deps.capabilities.elicitationForm
      ? this.askForm(prompt, controller)
      : this.askByPermission(prompt, controller)
    void asking.catch((error: unknown) => {
      if (!controller.signal.aborted && !settledMeanwhile(error))
        this.say(toolCallId, `Your answer did not reach Planbridge: ${String(error)}`)
    })
  }

  /** An approval or a plan decision that is not a question card's transport. */
  request(event: RuntimeEventOf<"request.opened">): void {
    const { deps } = this
    const { requestId, options, title, detail, requestKind } = event.payload
    const toolCallId = event.itemId ?? requestId
    if (event.itemId === undefined)
      deps.update({ sessionUpdate: "tool_call", toolCallId, title: title ?? "Permission", status: "pending" })
    const controller = new AbortController()
    this.open.set(requestId, {
      controller,
      replied: false,
      toolCallId,
      describe: (_answers, optionId) =>
        `Chosen: ${options.find((o) => o.id === optionId)?.label ?? optionId ?? "nothing"}`
    })
    const permission: acp.RequestPermissionRequest = {
      sessionId: deps.sessionId,
      toolCall: {
        toolCallId,
        title: title ?? detail ?? "Permission",
        status: "pending",
        ...(requestKind === "plan_approval" ? { kind: "switch_mode" as const } : {})
      },
      options: options.map((o) => ({ optionId: o.id, name: o.label, kind: permissionKind(o.kind) }))
    }
    const asking = this.askApproval(requestId, permission, options, controller)
    void asking.catch((error: unknown) => {
      if (!controller.signal.aborted && !settledMeanwhile(error))
        this.say(toolCallId, `Your choice did not reach Planbridge: ${String(error)}`)
    })
  }

  /** A prompt or request resolved, here or elsewhere: cancel what the editor still shows, say how. */
  resolved(
    id: string,
    ok: boolean,
    answers: ReadonlyArray<UserInputAnswerEntry>,
    optionId: string | undefined,
    why: string
  ): void {
    const open = this.open.get(id)
    if (open === undefined) return
    this.open.delete(id)
    if (!open.replied) open.controller.abort(new Error(`resolved in Planbridge: ${why}`))
    const detail = ok ? open.describe(answers, optionId) : ""
    this.deps.update({
      sessionUpdate: "tool_call_update",
      toolCallId: open.toolCallId,
      status: ok ? "completed" : "failed",
      content: [{ type: "content", content: { type: "text", text: detail.length > 0 ? `${why}\n${detail}` : why } }]
    })
  }

  /** The connection or session ends: nothing is left open on the editor's side. */
  closeAll(): void {
    for (const open of this.open.values()) open.controller.abort(new Error("the session closed"))
    this.open.clear()
  }

  /**
   * The editor replied: whether the reply still counts (nobody resolved it meanwhile). The entry
   * stays until the server's resolution, which describes the outcome in the stream.
   */
  private settle(id: string, controller: AbortController, final: boolean): boolean {
    if (controller.signal.aborted) return false
    const open = this.open.get(id)
    if (open !== undefined && final) open.replied = true
    return true
  }

  private async askApproval(
    requestId: RequestId,
    permission: acp.RequestPermissionRequest,
    options: ReadonlyArray<RequestOption>,
    controller: AbortController
  ): Promise<void> {
    const { deps } = this
    await deps.flushed()
    if (controller.signal.aborted) return
    const response = await deps.editor.request("session/request_permission", permission, {
      cancellationSignal: controller.signal,
      stopWaitingOnCancel: true
    })
    if (!this.settle(requestId, controller, true)) return
    if (response.outcome.outcome !== "selected") return
    const chosen = response.outcome.optionId
    const option = options.find((o) => o.id === chosen)
    if (option === undefined)
      return this.say(permission.toolCall.toolCallId, `The editor chose '${chosen}', which is not an option`)
    await deps.client.respondToRequest(requestId, option.id)
  }

  private async askForm(prompt: UserInputPrompt, controller: AbortController): Promise<void> {
    const { deps } = this
    const form: acp.CreateElicitationRequest = elicitationForm(deps.sessionId, prompt.promptId, prompt)
    await deps.flushed()
    // Resolved elsewhere while the updates before it were written: nothing to ask any more.
    if (controller.signal.aborted) return
    const response = await deps.editor.request("elicitation/create", form, {
      cancellationSignal: controller.signal,
      stopWaitingOnCancel: true
    })
    if (!this.settle(prompt.promptId, controller, true)) return
    if (response.action === "accept") {
      await deps.client.respond(prompt.promptId, answersOfForm(prompt, formContent(response)))
    } else {
      await deps.client.dismiss(prompt.promptId, response.action === "decline" ? "empty" : "cancelled")
    }
  }

  private async askByPermission(prompt: UserInputPrompt, controller: AbortController): Promise<void> {
    const { deps } = this
    const answers: Array<UserInputAnswerEntry> = []
    for (const q of prompt.questions) {
      const request = questionPermission(deps.sessionId, prompt.promptId, q)
      if (request === undefined) {
        // Left pending for the web UI or the CLI: a typed answer cannot come through a permission.
        return this.say(prompt.promptId, freeTextFallback(prompt, q))
      }
      await deps.flushed()
      if (controller.signal.aborted) return
      const response = await deps.editor.request("session/request_permission", request, {
        cancellationSignal: controller.signal,
        stopWaitingOnCancel: true
      })
      if (!this.settle(prompt.promptId, controller, q === prompt.questions.at(-1))) return
      if (response.outcome.outcome === "cancelled")
        return void (await deps.client.dismiss(prompt.promptId, "cancelled"))
      const answer = answerOfPermission(q, response.outcome.optionId)
      if (answer !== undefined) answers.push(answer)
    }
    await (answers.length === 0
      ? deps.client.dismiss(prompt.promptId, "empty")
      : deps.client.respond(prompt.promptId, answers))
  }

  private say(toolCallId: string, text: string): void {
    this.deps.update({
      sessionUpdate: "tool_call_update",
      toolCallId,
      content: [{ type: "content", content: { type: "text", text } }]
    })
  }
}

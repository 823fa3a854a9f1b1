import type { PlanbridgeClient } from "@planbridge/client"
import {
  OptionId,
  type OperatingMode,
  type PromptView,
  type ProposedPlanView,
  type ProviderKind,
  type RequestView,
  type RuntimeEvent,
  type ThreadId,
  type ThreadSnapshot,
  type TurnView,
  type UserInputAnswerEntry
} from "@planbridge/contracts"

/** How long a wait lasts unless told otherwise. */
export const DEFAULT_WAIT_MS = 10_000

/**
 * A session on a replayed provider, followed: waits on what the thread shows (its snapshot,
 * kept by the client) and answers through the client's normal commands.
 */
export interface RecordedThread {
  readonly threadId: ThreadId
  /** Every event received since the thread was followed (warnings are only here, not in the snapshot). */
  readonly events: ReadonlyArray<RuntimeEvent>
  /** The thread as the client holds it now. */
  readonly snapshot: () => ThreadSnapshot | undefined
  /** Resolves with `pick`'s first defined answer for the thread's snapshot; rejects after `timeoutMs`. */
  readonly until: <A>(what: string, pick: (s: ThreadSnapshot) => A | undefined, timeoutMs?: number) => Promise<A>
  readonly send: (text: string, mode?: OperatingMode) => Promise<void>
  /** The first pending question card. */
  readonly waitForPrompt: (timeoutMs?: number) => Promise<PromptView>
  /** The first pending approval (a command, a file change, a tool). */
  readonly waitForApproval: (timeoutMs?: number) => Promise<RequestView>
  /** The first proposed plan, complete and not yet decided. */
  readonly waitForPlan: (timeoutMs?: number) => Promise<ProposedPlanView>
  /** The newest checklist, once there is one with at least `steps` steps. */
  readonly waitForChecklist: (steps?: number, timeoutMs?: number) => Promise<NonNullable<ThreadSnapshot["latestPlan"]>>
  /** The last turn, once it has ended. */
  readonly waitForTurnEnd: (timeoutMs?: number) => Promise<TurnView>
  readonly answer: (prompt: PromptView, answers: ReadonlyArray<UserInputAnswerEntry>) => Promise<void>
  /** Answers with the options labelled `labels`, one list per question, in the prompt's order. */
  readonly choose: (prompt: PromptView, ...labels: ReadonlyArray<ReadonlyArray<string>>) => Promise<void>
  readonly approve: (request: RequestView, optionId?: string) => Promise<void>
  readonly decidePlan: (plan: ProposedPlanView, decision: "approved" | "rejected", feedback?: string) => Promise<void>
  readonly interrupt: () => Promise<void>
  /** Stops following the thread. */
  readonly close: () => Promise<void>
}

/** Starts a session on `provider` (a recording offered by `serve --replay`) and follows its thread. */
export const startRecordedSession = async (
  client: PlanbridgeClient,
  provider: ProviderKind,
  options: { readonly cwd?: string; readonly mode?: OperatingMode } = {}
): Promise<RecordedThread> => {
  const info = client.providers.find((p) => p.provider === provider)
  if (info === undefined)
    throw new Error(`no provider '${provider}' (offered: ${client.providers.map((p) => p.provider).join(", ")})`)
  const mode = options.mode ?? (info.capabilities.supportsPlanMode ? "plan" : "default")
  const { threadId } = await client.startSession(provider, options.cwd ?? process.cwd(), mode)
  const events: Array<RuntimeEvent> = []
  const stopEvents = client.onEvent((id, event) => {
    if (id === threadId) events.push(event)
  })
  const store = await client.follow(threadId)

  const until = <A>(what: string, pick: (s: ThreadSnapshot) => A | undefined, timeoutMs = DEFAULT_WAIT_MS) =>
    new Promise<A>((resolve, reject) => {
      const check = () => {
        const snapshot = store.getSnapshot()
        const found = snapshot === undefined ? undefined : pick(snapshot)
        if (found === undefined) return false
        stop()
        clearTimeout(timer)
        resolve(found)
        return true
      }
      const stop = store.subscribe(() => void check())
      const timer = setTimeout(() => {
        stop()
        reject(new Error(`thread ${threadId}: no ${what} within ${timeoutMs} ms`))
      }, timeoutMs)
      check()
    })

  const lastTurn = (s: ThreadSnapshot) => s.turns.at(-1)
  const thread: RecordedThread = {
    threadId,
    events,
    snapshot: () => store.getSnapshot(),
    until,
    send: async (text, turnMode) => void (await client.startTurn(threadId, text, turnMode)),
    waitForPrompt: (timeoutMs) =>
      until("pending prompt", (s) => s.prompts.find((p) => p.status === "pending"), timeoutMs),
    waitForApproval: (timeoutMs) =>
      until(
        "pending approval",
        (s) => s.requests.find((r) => r.status === "pending" && r.kind === "approval"),
        timeoutMs
      ),
    waitForPlan: (timeoutMs) =>
      until("proposed plan", (s) => s.proposedPlans.find((p) => p.markdown !== null && p.decision === null), timeoutMs),
    waitForChecklist: (steps = 1, timeoutMs) =>
      until(
        "checklist",
        (s) => (s.latestPlan !== null && s.latestPlan.plan.steps.length >= steps ? s.latestPlan : undefined),
        timeoutMs
      ),
    waitForTurnEnd: (timeoutMs) =>
      until(
        "ended turn",
        (s) => {
          const turn = lastTurn(s)
          return turn !== undefined && turn.status !== "inProgress" ? turn : undefined
        },
        timeoutMs
      ),
    answer: async (prompt, answers) => void (await client.respond(prompt.promptId, answers)),
    choose: async (prompt, ...labels) => {
      const answers = prompt.prompt.questions.map((question, index) => {
        const wanted = labels[index] ?? []
        const selected = wanted.map((label) => {
          const option = question.options.find((o) => o.label === label)
          if (option === undefined) throw new Error(`question '${question.id}' has no option '${label}'`)
          return option.id
        })
        return { questionId: question.id, selectedOptionIds: selected }
      })
      await thread.answer(prompt, answers)
    },
    approve: async (request, optionId) => {
      const chosen = optionId ?? request.options.find((o) => o.kind === "allow_once")?.id ?? request.options[0]?.id
      if (chosen === undefined) throw new Error(`request '${request.requestId}' offers no option`)
      await client.respondToRequest(request.requestId, OptionId.make(chosen))
    },
    decidePlan: async (plan, decision, feedback) =>
      void (await client.decidePlan({
        threadId,
        planId: plan.planId,
        decision,
        ...(feedback === undefined ? {} : { feedback })
      })),
    interrupt: async () => void (await client.interrupt(threadId)),
    close: async () => {
      stopEvents()
      await client.unfollow(threadId)
    }
  }
  return thread
}

import { requestDetailView, type RuntimeEvent } from "./events.ts"
import type { ProviderKind } from "./provider.ts"
import type {
  ThreadHistoryPage,
  PlanView,
  PromptView,
  ProposedPlanView,
  RequestView,
  ThreadSnapshot,
  TurnView
} from "./snapshot.ts"
import { ItemsByTurn, type Mutable } from "./itemsByTurn.ts"

const byTimeThenId =
  <T>(time: (t: T) => string, id: (t: T) => string) =>
  (a: T, b: T): number => {
    const ta = time(a)
    const tb = time(b)
    if (ta !== tb) return ta < tb ? -1 : 1
    const ia = id(a)
    const ib = id(b)
    return ia === ib ? 0 : ia < ib ? -1 : 1
  }

const itemTypeOfStream = {
  assistant_text: "assistant_message",
  reasoning_text: "reasoning",
  plan_text: "plan",
  tool_output: "tool_call"
} as const

/**
 * A client's view of one thread: a snapshot plus the events that follow it, folded with the
 * same rules the server's projections use (upsert by id, an item by its turn and id, completed
 * items authoritative, first resolution wins, every checklist a full replacement). Clients use
 * it to render; the reconnect tests use it to prove that what a client saw equals what the
 * server holds.
 */
export class ThreadState {
  private state: Mutable<
    Omit<ThreadSnapshot, "turns" | "items" | "proposedPlans" | "prompts" | "requests" | "planRevisions">
  >
  private readonly turns = new Map<string, Mutable<TurnView>>()
  private readonly items = new ItemsByTurn()
  private readonly proposed = new Map<string, Mutable<ProposedPlanView>>()
  private readonly prompts = new Map<string, Mutable<PromptView>>()
  private readonly requests = new Map<string, Mutable<RequestView>>()
  /** Checklist revisions per turn, to number the next one. */
  private readonly revisions = new Map<string, number>()

  private constructor(snapshot: ThreadSnapshot) {
    const { turns, items, proposedPlans, prompts, requests, planRevisions, ...rest } = snapshot
    this.state = { ...rest }
    for (const t of turns) this.turns.set(t.turnId, { ...t })
    for (const i of items) this.items.set({ ...i })
    for (const p of proposedPlans) this.proposed.set(p.planId, { ...p })
    for (const p of prompts) this.prompts.set(p.promptId, { ...p })
    for (const r of requests) this.requests.set(r.requestId, { ...r })
    for (const [turn, revision] of Object.entries(planRevisions)) this.revisions.set(turn, revision)
  }

  /** Starts from a snapshot the server sent. */
  static fromSnapshot(snapshot: ThreadSnapshot): ThreadState {
    return new ThreadState(snapshot)
  }

  /** Starts from nothing, before the thread's first event. */
  static empty(threadId: string, provider: ProviderKind): ThreadState {
    return ThreadState.fromSnapshot({
      threadId: threadId as ThreadSnapshot["threadId"],
      provider,
      seq: 0,
      state: "starting",
      flags: [],
      mode: null,
      nativeMode: null,
      model: null,
      capabilities: null,
      turns: [],
      items: [],
      latestPlan: null,
      planRevisions: {},
      proposedPlans: [],
      prompts: [],
      requests: [],
      olderTurns: null
    })
  }

  get seq(): number {
    return this.state.seq
  }

  /** The history before what this state holds, if any: `before` asks for the next page back. */
  get olderTurns(): ThreadSnapshot["olderTurns"] {
    return this.state.olderTurns
  }

  /**
   * Adds a page of older history (`thread.history`, asked for with `olderTurns.before`). A record
   * this state already holds is kept as it is: the snapshot and the events after it keep it
   * current, while the page may be from another `seq`. Pages are older than the window, so what
   * they add are finished turns.
   */
  addOlder(page: ThreadHistoryPage): void {
    const add = <V>(into: Map<string, V>, records: ReadonlyArray<V>, id: (v: V) => string) => {
      for (const record of records) if (!into.has(id(record))) into.set(id(record), { ...record })
    }
    add(this.turns, page.turns, (t) => t.turnId)
    for (const item of page.items)
      if (this.items.get(item.turnId, item.itemId) === undefined) this.items.set({ ...item })
    add(this.proposed, page.proposedPlans, (p) => p.planId)
    add(this.prompts, page.prompts, (p) => p.promptId)
    add(this.requests, page.requests, (r) => r.requestId)
    for (const [turn, revision] of Object.entries(page.planRevisions))
      if (!this.revisions.has(turn)) this.revisions.set(turn, revision)
    this.state.olderTurns = page.olderTurns
  }

  /** Applies the event with per-thread sequence `seq`. Events at or before the current seq are ignored. */
  apply(seq: number, event: RuntimeEvent): boolean {
    if (seq <= this.state.seq) return false
    if (seq !== this.state.seq + 1)
      throw new Error(`gap in thread ${this.state.threadId}: at ${this.state.seq}, got ${seq}`)
    this.state.seq = seq
    this.fold(event)
    return true
  }

  private fold(event: RuntimeEvent): void {
    const s = this.state
    const at = event.createdAt
    switch (event.type) {
      case "session.started":
        s.state = "starting"
        return
      case "session.configured":
        s.capabilities = event.payload.capabilities
        s.mode = event.payload.mode
        s.nativeMode = event.payload.nativeMode ?? null
        s.model = event.payload.model
        return
      case "session.state.changed":
        s.state = event.payload.state
        s.flags = event.payload.flags
        return
      case "session.exited":
        s.state = "stopped"
        s.flags = []
        return
      case "mode.changed":
        s.mode = event.payload.mode
        s.nativeMode = event.payload.nativeMode ?? null
        return
      case "capabilities.changed":
        s.capabilities = event.payload.capabilities
        return
      case "turn.started": {
        const turn = this.turns.get(event.turnId)
        if (turn === undefined) {
          this.turns.set(event.turnId, {
            turnId: event.turnId,
            status: "inProgress",
            mode: event.payload.mode ?? null,
            error: null,
            usage: null,
            startedAt: at,
            completedAt: null
          })
        } else if (event.payload.mode !== undefined) turn.mode = event.payload.mode
        return
      }
      case "turn.completed": {
        const q = event.payload
        const fields = { status: q.status, error: q.error ?? null, usage: q.usage ?? null, completedAt: at }
        const turn = this.turns.get(event.turnId)
        if (turn === undefined)
          this.turns.set(event.turnId, { turnId: event.turnId, mode: null, startedAt: at, ...fields })
        else Object.assign(turn, fields)
        return
      }
      case "item.started":
      case "item.updated":
      case "item.completed": {
        const q = event.payload
        const completed = event.type === "item.completed"
        const item = this.items.get(event.turnId, event.itemId)
        const fields = { itemType: q.itemType, status: q.status, title: q.title ?? null, toolName: q.toolName ?? null }
        if (item === undefined) {
          this.items.set({
            itemId: event.itemId,
            turnId: event.turnId,
            text: q.text ?? "",
            startedAt: at,
            completedAt: completed ? at : null,
            ...fields
          })
        } else {
          Object.assign(item, fields)
          if (q.text !== undefined) item.text = q.text
          if (completed) item.completedAt = at
        }
        return
      }
      case "content.delta": {
        const item = this.items.get(event.turnId, event.itemId)
        if (item === undefined) {
          this.items.set({
            itemId: event.itemId,
            turnId: event.turnId,
            itemType: itemTypeOfStream[event.payload.streamKind],
            status: "inProgress",
            title: null,
            toolName: null,
            text: event.payload.delta,
            startedAt: at,
            completedAt: null
          })
        } else item.text += event.payload.delta
        return
      }
      case "turn.plan.updated": {
        const revision = (this.revisions.get(event.turnId) ?? 0) + 1
        this.revisions.set(event.turnId, revision)
        s.latestPlan = { turnId: event.turnId, revision, plan: event.payload.plan } satisfies PlanView
        return
      }
      case "plan.proposed.delta": {
        const plan = this.proposed.get(event.payload.planId)
        if (plan === undefined)
          this.proposed.set(event.payload.planId, {
            ...emptyPlan(event.payload.planId, event.turnId, at),
            status: "streaming",
            streamedText: event.payload.delta
          })
        else plan.streamedText += event.payload.delta
        return
      }
      case "plan.proposed.completed": {
        const q = event.payload
        const fields = { status: "completed", markdown: q.markdown, filePath: q.filePath ?? null }
        const plan = this.proposed.get(q.planId)
        if (plan === undefined) this.proposed.set(q.planId, { ...emptyPlan(q.planId, event.turnId, at), ...fields })
        else Object.assign(plan, fields)
        return
      }
      case "plan.decision": {
        const q = event.payload
        const fields = {
          status: q.decision === "rejected" ? "rejected" : "approved",
          decision: q.decision,
          feedback: q.feedback ?? null,
          editedMarkdown: q.editedMarkdown ?? null,
          resolvedBy: q.resolvedBy ?? null
        }
        const plan = this.proposed.get(q.planId)
        if (plan === undefined) this.proposed.set(q.planId, { ...emptyPlan(q.planId, event.turnId, at), ...fields })
        else Object.assign(plan, fields)
        return
      }
      case "request.opened": {
        const q = event.payload
        if (this.requests.has(q.requestId)) return
        this.requests.set(q.requestId, {
          requestId: q.requestId,
          turnId: event.turnId ?? null,
          kind: q.requestKind,
          title: q.title ?? null,
          detail: requestDetailView(q),
          options: q.options,
          status: "pending",
          resolution: null,
          optionId: null,
          promptId: q.promptId ?? null,
          planId: q.planId ?? null,
          createdAt: at,
          resolvedBy: null
        })
        return
      }
      case "request.resolved": {
        const request = this.requests.get(event.payload.requestId)
        if (request === undefined || request.status !== "pending") return
        request.status = "resolved"
        request.resolution = event.payload.resolution
        request.optionId = event.payload.optionId ?? null
        request.resolvedBy = event.payload.resolvedBy ?? null
        return
      }
      case "user-input.requested": {
        const q = event.payload
        if (this.prompts.has(q.prompt.promptId)) return
        this.prompts.set(q.prompt.promptId, {
          promptId: q.prompt.promptId,
          turnId: event.turnId ?? null,
          requestId: q.requestId ?? null,
          prompt: q.prompt,
          status: "pending",
          resolution: null,
          answers: null,
          reason: null,
          createdAt: at,
          resolvedAt: null,
          resolvedBy: null
        })
        return
      }
      case "user-input.resolved": {
        const prompt = this.prompts.get(event.payload.promptId)
        if (prompt === undefined || prompt.status !== "pending") return
        prompt.status = "resolved"
        prompt.resolution = event.payload.resolution
        prompt.answers = event.payload.answers
        prompt.reason = event.payload.reason ?? null
        prompt.resolvedAt = at
        prompt.resolvedBy = event.payload.resolvedBy ?? null
        return
      }
      case "runtime.warning":
      case "runtime.error":
        return
    }
  }

  /** The state as a snapshot, ordered exactly as the server orders its snapshots. */
  toSnapshot(): ThreadSnapshot {
    return {
      ...this.state,
      planRevisions: Object.fromEntries([...this.revisions.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
      turns: [...this.turns.values()].sort(
        byTimeThenId(
          (t) => t.startedAt,
          (t) => t.turnId
        )
      ),
      items: [...this.items.values()].sort(
        byTimeThenId(
          (i) => i.startedAt,
          (i) => i.itemId
        )
      ),
      proposedPlans: [...this.proposed.values()].sort(
        byTimeThenId(
          (p) => p.createdAt,
          (p) => p.planId
        )
      ),
      prompts: [...this.prompts.values()].sort(
        byTimeThenId(
          (p) => p.createdAt,
          (p) => p.promptId
        )
      ),
      requests: [...this.requests.values()].sort(
        byTimeThenId(
          (r) => r.createdAt,
          (r) => r.requestId
        )
      )
    }
  }
}

const emptyPlan = (
  planId: ProposedPlanView["planId"],
  turnId: ProposedPlanView["turnId"],
  at: string
): Mutable<ProposedPlanView> => ({
  planId,
  turnId,
  status: "completed",
  streamedText: "",
  markdown: null,
  filePath: null,
  decision: null,
  feedback: null,
  editedMarkdown: null,
  createdAt: at,
  resolvedBy: null
})

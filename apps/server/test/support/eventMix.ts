import type { RuntimeEvent } from "@planbridge/contracts"

/** A small deterministic PRNG (mulberry32), so that a failing seed reproduces. */
export const prng = (seed: number) => {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick: <A>(xs: ReadonlyArray<A>): A => xs[Math.floor(next() * xs.length)]!
  }
}

const capabilities = {
  supportsPlanMode: true,
  supportsAskMode: false,
  supportsStructuredPlanUpdates: true,
  supportsPlanTextStreaming: true,
  supportsStructuredUserInput: true,
  supportsFreeformUserInput: true,
  supportsMultiSelect: false,
  supportsExitPlanMode: false,
  supportsModeSwitching: true,
  supportsResume: true
}

/**
 * A realistic stream of canonical events across several threads: sessions, turns, streamed
 * assistant and plan text (most of the volume, as in real traffic), checklist snapshots,
 * questions with their answers (some secret), approvals, warnings. Ids are unique per call,
 * and events are valid in isolation (they decode), in an order a real adapter could produce.
 */
export const generateEventMix = (options: {
  readonly seed: number
  readonly count: number
  readonly threads?: number
  readonly prefix?: string
  /** Also approval requests with their options and detail (off by default: it changes the mix). */
  readonly approvals?: boolean
}): Array<RuntimeEvent> => {
  const r = prng(options.seed)
  const prefix = options.prefix ?? `s${options.seed}`
  const out: Array<RuntimeEvent> = []
  let n = 0
  let clock = Date.UTC(2026, 0, 1, 10, 0, 0)
  const base = (threadId: string, provider: string) => {
    clock += r.int(20)
    return { eventId: `${prefix}-e${n++}`, provider, threadId, createdAt: new Date(clock).toISOString() }
  }
  const threadCount = options.threads ?? 4
  const threads = Array.from({ length: threadCount }, (_, i) => ({
    id: `${prefix}-thr${i}`,
    provider: ["codex", "claude", "cursor"][i % 3]!,
    turn: 0,
    started: false
  }))
  const push = (e: unknown) => out.push(e as RuntimeEvent)

  while (out.length < options.count) {
    const t = r.pick(threads)
    const b = () => base(t.id, t.provider)
    if (!t.started) {
      t.started = true
      push({
        ...b(),
        type: "session.started",
        payload: { cwd: "/work", resumed: false, nativeThreadId: `native-${t.id}` }
      })
      push({
        ...b(),
        type: "session.configured",
        payload: { capabilities, mode: "plan", nativeMode: "plan", model: "gpt-5.5" }
      })
      continue
    }
    const turnId = `${t.id}-turn${t.turn++}`
    push({ ...b(), turnId, type: "turn.started", payload: { mode: r.pick(["plan", "default"]) } })
    push({ ...b(), type: "session.state.changed", payload: { state: "running", flags: [] } })
    const msgId = `${turnId}-msg`
    push({
      ...b(),
      turnId,
      itemId: msgId,
      type: "item.started",
      payload: { itemType: "assistant_message", status: "inProgress" }
    })
    const pieces = 5 + r.int(40)
    let text = ""
    for (let i = 0; i < pieces; i++) {
      const delta = `word${r.int(1000)} `
      text += delta
      push({
        ...b(),
        turnId,
        itemId: msgId,
        type: "content.delta",
        payload: { streamKind: r.next() < 0.8 ? "assistant_text" : "reasoning_text", delta }
      })
    }
    push({
      ...b(),
      turnId,
      itemId: msgId,
      type: "item.completed",
      payload: { itemType: "assistant_message", status: "completed", text }
    })
    if (r.next() < 0.5) {
      for (let rev = 0; rev < 1 + r.int(3); rev++) {
        const steps = Array.from({ length: 1 + r.int(4) }, (_, i) => ({
          step: `step ${i}`,
          status: r.pick(["pending", "inProgress", "completed"])
        }))
        push({
          ...b(),
          turnId,
          type: "turn.plan.updated",
          payload: { plan: { explanation: r.next() < 0.5 ? null : "why", steps, source: "native" } }
        })
      }
    }
    if (r.next() < 0.4) {
      const promptId = `${turnId}-prompt`
      const requestId = `${turnId}-req`
      const secret = r.next() < 0.3
      push({
        ...b(),
        turnId,
        type: "request.opened",
        payload: {
          requestId,
          requestKind: "user_input",
          options: [],
          native: { method: "item/tool/requestUserInput", id: r.int(100) },
          promptId
        }
      })
      push({
        ...b(),
        turnId,
        type: "user-input.requested",
        payload: {
          requestId,
          prompt: {
            promptId,
            source: "native",
            blocking: true,
            questions: [
              {
                id: "db",
                label: "Which database?",
                options: [
                  { id: "opt-0", label: "PostgreSQL" },
                  { id: "opt-1", label: "SQLite" }
                ],
                multiSelect: false,
                allowFreeform: true,
                secret: false,
                required: true
              },
              {
                id: "token",
                label: "Token?",
                options: [{ id: "opt-0", label: "none" }],
                multiSelect: false,
                allowFreeform: true,
                secret,
                required: false
              }
            ]
          }
        }
      })
      const outcome = r.next()
      if (outcome < 0.7) {
        push({
          ...b(),
          turnId,
          type: "user-input.resolved",
          payload: {
            promptId,
            resolution: "answered",
            answers: [
              { questionId: "db", selectedOptionIds: ["opt-1"] },
              { questionId: "token", text: `tok-${r.int(1e6)}` }
            ]
          }
        })
        push({ ...b(), type: "request.resolved", payload: { requestId, resolution: "responded" } })
      } else if (outcome < 0.85) {
        push({
          ...b(),
          turnId,
          type: "user-input.resolved",
          payload: { promptId, resolution: "cancelled", answers: [] }
        })
        push({ ...b(), type: "request.resolved", payload: { requestId, resolution: "cancelled" } })
      }
      // else: left pending
    }
    if (options.approvals === true && r.next() < 0.4) {
      const requestId = `${turnId}-approval`
      push({
        ...b(),
        turnId,
        type: "request.opened",
        payload: {
          requestId,
          requestKind: "approval",
          title: "Run a command?",
          ...(r.next() < 0.5 ? { detail: `rm -rf build-${r.int(100)}` } : {}),
          options: [
            { id: "allow", label: "Allow", kind: "allow_once" },
            { id: "deny", label: "Deny", kind: "reject_once" }
          ],
          native: { method: "session/request_permission", id: 1000 + r.int(100) }
        }
      })
      if (r.next() < 0.6)
        push({ ...b(), type: "request.resolved", payload: { requestId, resolution: "responded", optionId: "allow" } })
    }
    if (r.next() < 0.3) {
      const planId = `${turnId}-plan`
      let plan = ""
      for (let i = 0; i < 3 + r.int(10); i++) {
        const delta = `- item ${i}\n`
        plan += delta
        push({ ...b(), turnId, itemId: planId, type: "content.delta", payload: { streamKind: "plan_text", delta } })
        push({ ...b(), turnId, type: "plan.proposed.delta", payload: { planId, delta } })
      }
      push({ ...b(), turnId, type: "plan.proposed.completed", payload: { planId, markdown: `# Plan\n${plan}` } })
      if (r.next() < 0.5)
        push({
          ...b(),
          turnId,
          type: "plan.decision",
          payload: { planId, decision: r.pick(["approved", "rejected", "edited"]) }
        })
    }
    if (r.next() < 0.1)
      push({
        ...b(),
        type: "runtime.warning",
        payload: { code: "malformed_line", message: "not JSON", detail: { line: "garbage" } }
      })
    push({
      ...b(),
      turnId,
      type: "turn.completed",
      payload: {
        status: r.pick(["completed", "completed", "interrupted", "failed"]),
        usage: { inputTokens: 100, outputTokens: 20 }
      }
    })
    push({ ...b(), type: "session.state.changed", payload: { state: "idle", flags: [] } })
  }
  return out.slice(0, options.count)
}

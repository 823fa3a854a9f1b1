import type * as acp from "@agentclientprotocol/sdk/unstable"
import { RequestError } from "@agentclientprotocol/sdk/unstable"
import { PlanbridgeError, type PlanbridgeClient } from "@planbridge/client"
import type {
  OperatingMode,
  ProviderCapabilities,
  RuntimeEvent,
  RuntimeEventOf,
  ThreadId,
  ThreadSnapshot
} from "@planbridge/contracts"
import { EditorAsks, type EditorCapabilities } from "./EditorAsks.ts"
import { updatesOf, type UpdateContext } from "./EventUpdates.ts"
import { configOptions, modeState } from "./SessionModes.ts"

type TurnCompleted = RuntimeEventOf<"turn.completed">["payload"]

/** How many finished turns are remembered for a `session/prompt` whose answer came after them. */
const REMEMBERED_TURNS = 64

/**
 * One ACP session: a Planbridge thread the editor opened, loaded or resumed. It turns the
 * thread's events into `session/update`s (in order, behind one queue), what the thread waits on
 * into requests to the editor, and answers each `session/prompt` with its turn's stop reason.
 */
export class AgentSession {
  /** Null before the thread's `session.configured` (its first events still on their way). */
  private capabilities: ProviderCapabilities | null
  private mode: OperatingMode
  private outbox: Promise<void> = Promise.resolve()
  private readonly context: UpdateContext
  private readonly asks: EditorAsks
  private readonly waiting = new Map<string, (completed: TurnCompleted) => void>()
  private readonly finished = new Map<string, TurnCompleted>()

  constructor(
    readonly threadId: ThreadId,
    snapshot: ThreadSnapshot,
    private readonly client: PlanbridgeClient,
    private readonly editor: acp.AgentContext,
    editorCapabilities: EditorCapabilities
  ) {
    this.capabilities = snapshot.capabilities
    this.mode = snapshot.mode ?? "default"
    this.context = { planUpdates: editorCapabilities.planUpdates, streamedItems: new Set(), ownTurns: new Set() }
    this.asks = new EditorAsks({
      client,
      editor,
      sessionId: threadId,
      capabilities: editorCapabilities,
      update: (update) => this.update(update),
      flushed: () => this.flushed()
    })
  }

  get modes(): acp.SessionModeState {
    return modeState(this.capabilities, this.mode)
  }
  get configOptions(): Array<acp.SessionConfigOption> {
    return configOptions(this.capabilities, this.mode)
  }

  /** Queues a `session/update`: sent after every earlier one. */
  update(update: acp.SessionUpdate): void {
    const notification = { sessionId: this.threadId, update }
    this.outbox = this.outbox.then(
      () => this.editor.notify("session/update", notification),
      () => this.editor.notify("session/update", notification)
    )
  }

  /** Resolves once every queued update is written (before a reply that must come after them). */
  flushed(): Promise<void> {
    return this.outbox.catch(() => undefined)
  }

  /** What the thread still waits on when the editor opens it: put to the editor now. */
  askPending(snapshot: ThreadSnapshot): void {
    for (const prompt of snapshot.prompts) if (prompt.status === "pending") this.asks.prompt(prompt.prompt)
  }

  /** One live event of the thread, in order. */
  onEvent(event: RuntimeEvent): void {
    for (const update of updatesOf(event, this.context)) this.update(update)
    switch (event.type) {
      case "session.configured":
        this.capabilities = event.payload.capabilities
        this.mode = event.payload.mode
        return this.modesChanged()
      case "capabilities.changed":
        this.capabilities = event.payload.capabilities
        return this.modesChanged()
      case "mode.changed":
        this.mode = event.payload.mode
        this.update({ sessionUpdate: "current_mode_update", currentModeId: this.mode })
        return this.modesChanged()
      case "user-input.requested":
        return this.asks.prompt(event.payload.prompt)
      case "request.opened":
        // A question card's transport is asked as the card (`user-input.requested`).
        if (event.payload.promptId === undefined) this.asks.request(event)
        return
      case "user-input.resolved": {
        const { promptId, resolution, answers, reason } = event.payload
        const why = `${resolution === "answered" ? "Answered" : `Resolved (${resolution})`}${reason === undefined ? "" : `: ${reason}`}`
        return this.asks.resolved(promptId, resolution === "answered", answers, undefined, why)
      }
      case "request.resolved": {
        const { requestId, resolution, optionId } = event.payload
        return this.asks.resolved(requestId, resolution === "responded", [], optionId, `Resolved (${resolution})`)
      }
      case "turn.completed":
        return this.turnCompleted(event.turnId, event.payload)
      default:
        return
    }
  }

  /** `session/prompt`: a new turn (resuming the thread first when its session is not live). */
  async prompt(text: string): Promise<acp.PromptResponse> {
    const { turnId } = await this.startTurn(text)
    this.context.ownTurns.add(turnId)
    const completed = await this.completion(turnId)
    await this.flushed()
    if (completed.status === "failed")
      throw new RequestError(-32603, completed.error?.message ?? "the turn failed", {
        planbridge: { code: completed.error?.code ?? "turn_failed" }
      })
    return { stopReason: completed.status === "interrupted" ? "cancelled" : "end_turn" }
  }

  /** The editor closed the session or the connection: nothing stays open on its side. */
  close(): void {
    this.asks.closeAll()
  }

  private async startTurn(text: string): Promise<{ readonly turnId: string }> {
    try {
      return await this.client.startTurn(this.threadId, text)
    } catch (error) {
      if (
        !(error instanceof PlanbridgeError) ||
        error.code !== "session_not_live" ||
        this.capabilities?.supportsResume !== true
      )
        throw error
      // A loaded thread whose provider session ended (a restart): continue the provider's own conversation.
      await this.client.resumeThread(this.threadId)
      return await this.client.startTurn(this.threadId, text)
    }
  }

  private completion(turnId: string): Promise<TurnCompleted> {
    const done = this.finished.get(turnId)
    if (done !== undefined) {
      this.finished.delete(turnId)
      return Promise.resolve(done)
    }
    return new Promise((resolve) => this.waiting.set(turnId, resolve))
  }

  private turnCompleted(turnId: string, completed: TurnCompleted): void {
    const waiter = this.waiting.get(turnId)
    if (waiter !== undefined) {
      this.waiting.delete(turnId)
      return waiter(completed)
    }
    // The turn's result may reach us after its events (the server answers after committing them).
    this.finished.set(turnId, completed)
    if (this.finished.size > REMEMBERED_TURNS) this.finished.delete(this.finished.keys().next().value!)
  }

  private modesChanged(): void {
    this.update({ sessionUpdate: "config_option_update", configOptions: this.configOptions })
  }
}

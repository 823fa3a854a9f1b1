import {
  PROTOCOL_VERSION,
  ServerFrame,
  ThreadHistoryPage,
  type Command,
  type OperatingMode,
  type OptionId,
  type PlanId,
  type PromptId,
  type ProviderInfo,
  type ProviderKind,
  type RuntimeEvent,
  type RequestId,
  type ThreadId,
  type ThreadSummary,
  type UserInputAnswerEntry
} from "@planbridge/contracts"
import { Exit, Schema } from "effect"
import { backoffDelay, DEFAULT_BACKOFF, type BackoffOptions } from "./backoff.ts"
import { Inbox } from "./Inbox.ts"
import { PlanbridgeError } from "./PlanbridgeError.ts"
import { ThreadStore } from "./ThreadStore.ts"

/** The part of the WebSocket API this client uses: the browser's, Node 22's, or `ws`'s. */
export interface WebSocketLike {
  readonly readyState: number
  send(data: string): void
  close(code?: number, reason?: string): void
  onopen: ((event: unknown) => void) | null
  onmessage: ((event: { readonly data: unknown }) => void) | null
  onclose: ((event: { readonly code: number; readonly reason: string }) => void) | null
  onerror: ((event: unknown) => void) | null
}
export type WebSocketConstructor = new (url: string) => WebSocketLike

export interface ClientOptions {
  /** The server, e.g. `http://127.0.0.1:4317` (the WebSocket is `/ws` on it). */
  readonly url: string
  /** Sent in `hello` (browsers cannot set headers on a WebSocket). */
  readonly token: string
  /** Defaults to `globalThis.WebSocket` (browsers, Node ≥ 22); pass `ws`'s on Node 20. */
  readonly WebSocket?: WebSocketConstructor
  readonly backoff?: BackoffOptions
  /** Named in `hello`, for the server's logs. */
  readonly clientName?: string
  /** A frame this client could not decode (a newer server?). It is dropped. */
  readonly onBadFrame?: (text: string, error: string) => void
}

/** The result of `thread.resume`: the native session it continues, when it started one. */
export interface ThreadResumeResult {
  readonly threadId: ThreadId
  readonly resumed: boolean
  readonly resumedFrom?: string
}

export type ConnectionStatus = "connecting" | "open" | "reconnecting" | "closed"

type Pending = {
  readonly command: Command
  /** Safe to send again after a reconnect: it carries a `clientRequestId`, or it changes nothing. */
  readonly resendable: boolean
  readonly resolve: (result: unknown) => void
  readonly reject: (error: PlanbridgeError) => void
}

const decodeFrame = Schema.decodeUnknownExit(ServerFrame)
const decodePage = Schema.decodeUnknownExit(ThreadHistoryPage)

/** `thread.resume` is resendable too: on a live thread it starts nothing and answers `resumed: false`. */
const resendable = (command: Command): boolean =>
  "clientRequestId" in command ||
  command.type === "threads.list" ||
  command.type === "thread.unsubscribe" ||
  command.type === "thread.history" ||
  command.type === "thread.resume"

/**
 * A Planbridge connection that stays up: it says `hello`, correlates every command with its
 * `result` or `error`, reconnects with backoff and jitter (at once after 1013), resumes each
 * followed thread with `afterSeq` (a snapshot replaces the thread's state; a gap resubscribes),
 * and resends answers after a reconnect under the same `clientRequestId`, so the server applies
 * each exactly once. Commands that are not idempotent fail `disconnected` instead of being
 * resent. A refused token (4401) or `close()` ends it.
 */
export class PlanbridgeClient {
  readonly inbox = new Inbox()
  private socket: WebSocketLike | undefined
  private status_: ConnectionStatus = "connecting"
  private providers_: ReadonlyArray<ProviderInfo> = []
  private attempt = 0
  private nextId = 0
  private reconnectTimer: ReturnType<typeof setTimeout> | undefined
  private readonly pending = new Map<string, Pending>()
  /** Commands waiting for the connection to open. */
  private readonly queued: Array<string> = []
  private readonly threads = new Map<string, ThreadStore>()
  /** Threads with a resubscribe in flight: further gaps wait for its answer. */
  private readonly resyncing = new Set<string>()
  private readonly statusListeners = new Set<(status: ConnectionStatus) => void>()
  private readonly eventListeners = new Set<(threadId: ThreadId, event: RuntimeEvent) => void>()
  private readonly threadErrorListeners = new Set<(threadId: ThreadId, error: PlanbridgeError) => void>()
  /** Threads whose first subscribe asks for every event from the start (`afterSeq: 0`). */
  private readonly fromStart = new Set<string>()
  /** How many turns a thread's snapshot should hold, when not the server's default. */
  private readonly windows = new Map<string, number>()
  /** A page of older turns being loaded, per thread: asked for once however often a UI calls. */
  private readonly loadingOlder = new Map<string, Promise<ThreadHistoryPage | undefined>>()
  private welcomed: { resolve: () => void; reject: (e: PlanbridgeError) => void } | undefined

  private constructor(private readonly options: ClientOptions) {}

  /** Connects; resolves at the first `welcome`, rejects if the token or protocol is refused. */
  static connect(options: ClientOptions): Promise<PlanbridgeClient> {
    const client = new PlanbridgeClient(options)
    return new Promise((resolve, reject) => {
      client.welcomed = { resolve: () => resolve(client), reject }
      client.open()
    })
  }

  get status(): ConnectionStatus {
    return this.status_
  }
  /** Providers the server offers, from the last `welcome` (capabilities, label, readiness, demo flag). */
  get providers(): ReadonlyArray<ProviderInfo> {
    return this.providers_
  }
  onStatus(listener: (status: ConnectionStatus) => void): () => void {
    this.statusListeners.add(listener)
    return () => this.statusListeners.delete(listener)
  }

  /**
   * Every event folded into a followed thread, once, in order (not repeats after a resume):
   * for what the thread state does not keep, such as warnings or a request's options.
   */
  onEvent(listener: (threadId: ThreadId, event: RuntimeEvent) => void): () => void {
    this.eventListeners.add(listener)
    return () => this.eventListeners.delete(listener)
  }

  /**
   * A followed thread could not be caught up after a reconnect or a gap: its resubscribe failed.
   * With `unknown_thread` (the server lost it, e.g. its data dir was replaced) the client also
   * stops following it: its store's `gone` says why, and its prompts leave the inbox.
   */
  onThreadError(listener: (threadId: ThreadId, error: PlanbridgeError) => void): () => void {
    this.threadErrorListeners.add(listener)
    return () => this.threadErrorListeners.delete(listener)
  }

  // ---- commands ---------------------------------------------------------------------------

  startSession(provider: ProviderKind, cwd: string, mode: OperatingMode): Promise<{ readonly threadId: ThreadId }> {
    return this.command({ type: "session.start", provider, cwd, mode }) as Promise<{ readonly threadId: ThreadId }>
  }
  startTurn(threadId: ThreadId, text: string, mode?: OperatingMode): Promise<{ readonly turnId: string }> {
    const command: Command =
      mode === undefined ? { type: "turn.start", threadId, text } : { type: "turn.start", threadId, text, mode }
    return this.command(command) as Promise<{ readonly turnId: string }>
  }
  interrupt(threadId: ThreadId): Promise<unknown> {
    return this.command({ type: "turn.interrupt", threadId })
  }
  setMode(threadId: ThreadId, mode: OperatingMode): Promise<unknown> {
    return this.command({ type: "mode.set", threadId, mode })
  }
  /** Answers a prompt; safe across reconnects (one `clientRequestId` for all attempts). */
  respond(
    promptId: PromptId,
    answers: ReadonlyArray<UserInputAnswerEntry>,
    clientRequestId = newRequestId()
  ): Promise<unknown> {
    return this.command({ type: "userInput.respond", promptId, answers, clientRequestId })
  }
  dismiss(promptId: PromptId, resolution: "empty" | "cancelled", clientRequestId = newRequestId()): Promise<unknown> {
    return this.command({ type: "userInput.dismiss", promptId, resolution, clientRequestId })
  }
  respondToRequest(requestId: RequestId, optionId: OptionId, clientRequestId = newRequestId()): Promise<unknown> {
    return this.command({ type: "request.respond", requestId, optionId, clientRequestId })
  }
  decidePlan(
    input: {
      readonly threadId: ThreadId
      readonly planId: PlanId
      readonly decision: "approved" | "rejected" | "edited"
      readonly feedback?: string
      readonly editedMarkdown?: string
    },
    clientRequestId = newRequestId()
  ): Promise<unknown> {
    return this.command({ type: "plan.decide", ...input, clientRequestId })
  }
  /**
   * Attaches a new provider session to a thread that is not live (after a restart or a provider
   * exit), continuing the provider's own conversation. `resumed: false`: it was live already.
   */
  resumeThread(threadId: ThreadId, mode?: OperatingMode): Promise<ThreadResumeResult> {
    const command: Command =
      mode === undefined ? { type: "thread.resume", threadId } : { type: "thread.resume", threadId, mode }
    return this.command(command) as Promise<ThreadResumeResult>
  }
  listThreads(): Promise<ReadonlyArray<ThreadSummary>> {
    return (this.command({ type: "threads.list" }) as Promise<{ readonly threads: ReadonlyArray<ThreadSummary> }>).then(
      (r) => r.threads
    )
  }

  /**
   * Follows a thread: its store fills with the snapshot and every event after it, across
   * reconnects. Resolves once the server accepted the subscription. The snapshot holds the
   * latest `window` turns (the server's default, `TURN_WINDOW`, when not given); `loadOlderTurns`
   * adds the ones before.
   */
  async follow(
    threadId: ThreadId,
    options?: { readonly fromStart?: boolean; readonly window?: number }
  ): Promise<ThreadStore> {
    const existing = this.threads.get(threadId)
    if (existing !== undefined) return existing
    const store = new ThreadStore(threadId)
    // The server replays from the start when the thread is short enough, else sends a snapshot.
    if (options?.fromStart === true) this.fromStart.add(threadId)
    if (options?.window !== undefined) this.windows.set(threadId, options.window)
    this.threads.set(threadId, store)
    this.inbox.follow(store)
    try {
      await this.command({ type: "thread.subscribe", threadId })
    } catch (error) {
      this.forget(threadId)
      throw error
    }
    return store
  }

  /**
   * Loads the page of (at most `limit`) turns before what a followed thread's store holds into
   * it (`thread.history`); resolves with the page, or undefined when the store holds the whole
   * thread already. A page asked for before a snapshot replaced the store (a resubscribe) is
   * dropped, and undefined returned: the store's `olderTurns` then says where to go on from.
   */
  loadOlderTurns(threadId: ThreadId, limit?: number): Promise<ThreadHistoryPage | undefined> {
    const store = this.threads.get(threadId)
    if (store === undefined)
      return Promise.reject(new PlanbridgeError("unknown_thread", `thread ${threadId} is not followed`))
    const older = store.olderTurns
    if (older === null) return Promise.resolve(undefined)
    const inFlight = this.loadingOlder.get(threadId)
    if (inFlight !== undefined) return inFlight
    const generation = store.generation
    const command: Command = {
      type: "thread.history",
      threadId,
      before: older.before,
      ...(limit === undefined ? {} : { limit })
    }
    const loading = this.command(command)
      .then((result) => {
        const page = decodePage(result)
        if (Exit.isFailure(page)) throw new PlanbridgeError("bad_frame", "a history page that does not decode")
        if (store.generation !== generation || this.threads.get(threadId) !== store) return undefined
        store.addOlder(page.value)
        return page.value
      })
      .finally(() => this.loadingOlder.delete(threadId))
    this.loadingOlder.set(threadId, loading)
    return loading
  }

  async unfollow(threadId: ThreadId): Promise<void> {
    if (!this.threads.has(threadId)) return
    this.forget(threadId)
    await this.command({ type: "thread.unsubscribe", threadId })
  }

  /** Ends the connection for good; pending commands fail `closed`. */
  close(): void {
    this.finish(new PlanbridgeError("closed", "the client was closed"))
  }

  /** Sends any command; resolves with its result, rejects with a `PlanbridgeError`. */
  command(command: Command): Promise<unknown> {
    if (this.status_ === "closed") return Promise.reject(new PlanbridgeError("closed", "the client is closed"))
    return new Promise((resolve, reject) => {
      const id = `c${++this.nextId}`
      this.pending.set(id, { command, resendable: resendable(command), resolve, reject })
      if (this.status_ === "open") this.transmit(id)
      else this.queued.push(id)
    })
  }

  // ---- connection ----------------------------------------------------------------------------

  private open(): void {
    const Ctor = this.options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket
    if (Ctor === undefined) {
      return this.finish(new PlanbridgeError("closed", "no WebSocket implementation: pass options.WebSocket"))
    }
    const url = `${this.options.url.replace(/^http/, "ws").replace(/\/$/, "")}/ws`
    let socket: WebSocketLike
    try {
      socket = new Ctor(url)
    } catch (error) {
      // A URL the WebSocket refuses will not get better by retrying.
      return this.finish(new PlanbridgeError("closed", `cannot open ${url}: ${String(error)}`))
    }
    this.socket = socket
    socket.onopen = () => {
      const hello = { type: "hello", protocolVersion: PROTOCOL_VERSION, token: this.options.token }
      socket.send(
        JSON.stringify(this.options.clientName === undefined ? hello : { ...hello, client: this.options.clientName })
      )
    }
    socket.onmessage = (event) => this.onFrame(typeof event.data === "string" ? event.data : String(event.data))
    socket.onerror = () => {}
    socket.onclose = (event) => {
      if (this.socket !== socket) return
      this.socket = undefined
      this.onClosed(event.code, event.reason)
    }
  }

  private onClosed(code: number, reason: string): void {
    if (this.status_ === "closed") return
    if (code === 4401) return this.finish(new PlanbridgeError("unauthorized", reason || "the token was refused"))
    // What the server never answered: answers go again under their clientRequestId; the rest fail.
    for (const [id, pending] of this.pending) {
      if (pending.resendable || pending.command.type === "thread.subscribe") {
        if (!this.queued.includes(id)) this.queued.push(id)
        continue
      }
      this.pending.delete(id)
      pending.reject(
        new PlanbridgeError(
          "disconnected",
          `the connection dropped (${code}) before ${pending.command.type} was answered`
        )
      )
    }
    this.resyncing.clear()
    this.setStatus("reconnecting")
    const delay = code === 1013 ? 0 : backoffDelay(this.attempt++, this.options.backoff ?? DEFAULT_BACKOFF)
    this.reconnectTimer = setTimeout(() => this.open(), delay)
  }

  private onWelcome(providers: ReadonlyArray<ProviderInfo>): void {
    this.providers_ = providers
    this.attempt = 0
    // Resume every followed thread from what it holds (a pending subscribe is sent below as is).
    const subscribing = new Set(
      [...this.pending.values()].flatMap((p) => (p.command.type === "thread.subscribe" ? [p.command.threadId] : []))
    )
    for (const store of this.threads.values()) {
      if (!subscribing.has(store.threadId as ThreadId)) this.resubscribe(store)
    }
    this.setStatus("open")
    const ids = this.queued.splice(0)
    for (const id of ids) this.transmit(id)
    this.welcomed?.resolve()
    this.welcomed = undefined
  }

  private resubscribe(store: ThreadStore): void {
    if (this.resyncing.has(store.threadId)) return
    this.resyncing.add(store.threadId)
    const threadId = store.threadId as ThreadId
    const done = () => void this.resyncing.delete(threadId)
    void this.command({ type: "thread.subscribe", threadId }).then(done, (error: PlanbridgeError) => {
      done()
      this.onResubscribeFailed(store, error)
    })
  }

  /** Everything the client keeps for a followed thread, dropped at once (its store is the app's). */
  private forget(threadId: ThreadId): void {
    this.threads.delete(threadId)
    this.fromStart.delete(threadId)
    this.windows.delete(threadId)
    this.inbox.unfollow(threadId)
  }

  /** A resubscribe the server refused: said to the app, never swallowed (`closed` ends everything anyway). */
  private onResubscribeFailed(store: ThreadStore, error: PlanbridgeError): void {
    if (error.code === "closed") return
    const threadId = store.threadId as ThreadId
    // Only the store that failed: a later follow() of the same id has a store of its own.
    if (error.code === "unknown_thread" && this.threads.get(threadId) === store) {
      this.forget(threadId)
      store.markGone(error)
    }
    for (const listener of [...this.threadErrorListeners]) listener(threadId, error)
  }

  private transmit(id: string): void {
    const pending = this.pending.get(id)
    if (pending === undefined || this.socket === undefined) return
    const command =
      pending.command.type === "thread.subscribe" ? this.subscribeCommand(pending.command.threadId) : pending.command
    this.socket.send(JSON.stringify({ type: "command", id, command }))
  }

  /** A subscribe sent (or resent) now asks for what the store does not hold yet. */
  private subscribeCommand(threadId: ThreadId): Command {
    const store = this.threads.get(threadId)
    if (store?.ready === true) return { type: "thread.subscribe", threadId, afterSeq: store.seq }
    const window = this.windows.get(threadId)
    return this.fromStart.has(threadId)
      ? { type: "thread.subscribe", threadId, afterSeq: 0 }
      : { type: "thread.subscribe", threadId, ...(window === undefined ? {} : { window }) }
  }

  private onFrame(text: string): void {
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch (error) {
      return this.options.onBadFrame?.(text, String(error))
    }
    const decoded = decodeFrame(json)
    if (Exit.isFailure(decoded)) return this.options.onBadFrame?.(text, String(decoded.cause))
    const frame = decoded.value
    switch (frame.type) {
      case "welcome":
        return this.onWelcome(frame.providers)
      case "result": {
        const pending = this.pending.get(frame.id)
        this.pending.delete(frame.id)
        return pending?.resolve(frame.result)
      }
      case "error": {
        if (frame.id === null) {
          if (frame.error.code === "protocol_version")
            this.finish(new PlanbridgeError(frame.error.code, frame.error.message))
          return
        }
        const pending = this.pending.get(frame.id)
        this.pending.delete(frame.id)
        return pending?.reject(new PlanbridgeError(frame.error.code, frame.error.message, frame.error.path))
      }
      case "snapshot":
        return this.threads.get(frame.threadId)?.replace(frame.snapshot)
      case "event": {
        const store = this.threads.get(frame.threadId)
        if (store === undefined) return
        const outcome = store.apply(frame.seq, frame.event)
        if (outcome === "gap") this.resubscribe(store)
        else if (outcome === "applied")
          for (const listener of [...this.eventListeners]) listener(frame.threadId, frame.event)
        return
      }
    }
  }

  private finish(error: PlanbridgeError): void {
    if (this.status_ === "closed") return
    this.setStatus("closed")
    clearTimeout(this.reconnectTimer)
    const socket = this.socket
    this.socket = undefined
    socket?.close(1000, "client closed")
    for (const pending of this.pending.values()) pending.reject(error)
    this.pending.clear()
    this.queued.length = 0
    this.welcomed?.reject(error)
    this.welcomed = undefined
  }

  private setStatus(status: ConnectionStatus): void {
    if (this.status_ === status) return
    this.status_ = status
    for (const listener of [...this.statusListeners]) listener(status)
  }
}

const newRequestId = (): string => globalThis.crypto.randomUUID()

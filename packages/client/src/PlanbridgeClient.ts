import type {
  Command,
  CommandSuccess,
  OperatingMode,
  OptionId,
  PlanId,
  PromptId,
  ProviderInfo,
  ProviderKind,
  RequestId,
  ResolutionOutcome,
  ServerLimits,
  RuntimeEvent,
  ThreadHistoryPage,
  ThreadId,
  ThreadResumeResult,
  ThreadSummary,
  UserInputAnswerEntry
} from "@planbridge/contracts"
import type { ClientOptions } from "./ClientOptions.ts"
import { Connection, type ConnectionStatus } from "./Connection.ts"
import { decodeServerFrame } from "./decodeServerFrame.ts"
import { FollowedThreads } from "./FollowedThreads.ts"
import { Inbox } from "./Inbox.ts"
import { OlderTurns } from "./OlderTurns.ts"
import { PendingCommands } from "./PendingCommands.ts"
import { PlanbridgeError } from "./PlanbridgeError.ts"
import { ResumingThreads } from "./ResumingThreads.ts"
import { ThreadList } from "./ThreadList.ts"
import type { ThreadStore } from "./ThreadStore.ts"

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
  private providers_: ReadonlyArray<ProviderInfo> = []
  private limits_: ServerLimits | undefined
  private readonly pending = new PendingCommands()
  private readonly eventListeners = new Set<(threadId: ThreadId, event: RuntimeEvent) => void>()
  private readonly threadErrorListeners = new Set<(threadId: ThreadId, error: PlanbridgeError) => void>()
  private readonly threads = new FollowedThreads(
    this.inbox,
    (command) => this.command(command),
    (threadId, error) => {
      for (const listener of [...this.threadErrorListeners]) listener(threadId, error)
    }
  )
  /** The followed thread list (`followThreadList`), and its subscribe while one is on its way. */
  private threadList: { readonly list: ThreadList; subscribing: Promise<ThreadList> | undefined } | undefined
  private readonly resuming = new ResumingThreads()
  private readonly olderTurns = new OlderTurns(this.threads, (command) => this.command(command))
  private welcomed: { resolve: () => void; reject: (e: PlanbridgeError) => void } | undefined
  private readonly connection: Connection

  private constructor(private readonly options: ClientOptions) {
    this.connection = new Connection(options, {
      onFrame: (text) => this.onFrame(text),
      onDropped: (code) => {
        // What the server never answered: answers go again under their clientRequestId; the rest fail.
        this.pending.dropped(code)
        this.threads.dropped()
      },
      onEnded: (error) => {
        this.pending.rejectAll(error)
        this.welcomed?.reject(error)
        this.welcomed = undefined
      }
    })
  }

  /** Connects; resolves at the first `welcome`, rejects if the token or protocol is refused. */
  static connect(options: ClientOptions): Promise<PlanbridgeClient> {
    const client = new PlanbridgeClient(options)
    return new Promise((resolve, reject) => {
      client.welcomed = { resolve: () => resolve(client), reject }
      client.connection.open()
    })
  }

  get status(): ConnectionStatus {
    return this.connection.status
  }
  /** Providers the server offers, from the last `welcome` (capabilities, label, readiness, demo flag). */
  get providers(): ReadonlyArray<ProviderInfo> {
    return this.providers_
  }
  /**
   * The server's bounds, from the last `welcome` (undefined before it, or from a server that does
   * not say): a command whose frame is larger than `maxFrameBytes` is refused here, not sent.
   */
  get limits(): ServerLimits | undefined {
    return this.limits_
  }
  onStatus(listener: (status: ConnectionStatus) => void): () => void {
    return this.connection.onStatus(listener)
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

  startSession(provider: ProviderKind, cwd: string, mode: OperatingMode): Promise<CommandSuccess<"session.start">> {
    return this.command({ type: "session.start", provider, cwd, mode })
  }
  /** Sent once a `resumeThread` of the thread on its way was answered (ResumingThreads.ts), so is `interrupt`, `setMode`, `decidePlan`. */
  startTurn(threadId: ThreadId, text: string, mode?: OperatingMode): Promise<CommandSuccess<"turn.start">> {
    return this.resuming.after(threadId, () =>
      this.command({ type: "turn.start", threadId, text, ...(mode === undefined ? {} : { mode }) })
    )
  }
  interrupt(threadId: ThreadId): Promise<CommandSuccess<"turn.interrupt">> {
    return this.resuming.after(threadId, () => this.command({ type: "turn.interrupt", threadId }))
  }
  setMode(threadId: ThreadId, mode: OperatingMode): Promise<CommandSuccess<"mode.set">> {
    return this.resuming.after(threadId, () => this.command({ type: "mode.set", threadId, mode }))
  }
  /** Answers a prompt; safe across reconnects (one `clientRequestId` for all attempts). */
  respond(
    promptId: PromptId,
    answers: ReadonlyArray<UserInputAnswerEntry>,
    clientRequestId = newRequestId()
  ): Promise<ResolutionOutcome> {
    return this.command({ type: "userInput.respond", promptId, answers, clientRequestId })
  }
  dismiss(
    promptId: PromptId,
    resolution: "empty" | "cancelled",
    clientRequestId = newRequestId()
  ): Promise<ResolutionOutcome> {
    return this.command({ type: "userInput.dismiss", promptId, resolution, clientRequestId })
  }
  respondToRequest(
    requestId: RequestId,
    optionId: OptionId,
    clientRequestId = newRequestId()
  ): Promise<ResolutionOutcome> {
    return this.command({ type: "request.respond", requestId, optionId, clientRequestId })
  }
  decidePlan(
    input: {
      readonly threadId: ThreadId
      readonly planId: PlanId
      readonly decision: "approved" | "rejected" | "edited"
      readonly feedback?: string
      readonly editedMarkdown?: string
      readonly optionId?: OptionId
    },
    clientRequestId = newRequestId()
  ): Promise<ResolutionOutcome> {
    return this.resuming.after(input.threadId, () => this.command({ type: "plan.decide", ...input, clientRequestId }))
  }
  /**
   * Attaches a new provider session to a thread that is not live (after a restart or a provider
   * exit), continuing the provider's own conversation. `resumed: false`: it was live already.
   */
  resumeThread(threadId: ThreadId, mode?: OperatingMode): Promise<ThreadResumeResult> {
    const resume = this.command({ type: "thread.resume", threadId, ...(mode === undefined ? {} : { mode }) })
    this.resuming.track(threadId, resume)
    return resume
  }
  /**
   * Files a thread away (`archived`, default true) or back (`thread.archive`): its summary then
   * carries `archivedAt` (or not), and every client following the thread list gets the entry again.
   * The thread itself is untouched. Resolves with the archive time in force (null: not archived).
   */
  archiveThread(
    threadId: ThreadId,
    archived = true
  ): Promise<{ readonly threadId: ThreadId; readonly archivedAt: string | null }> {
    return this.command({ type: "thread.archive", threadId, archived })
  }
  listThreads(): Promise<ReadonlyArray<ThreadSummary>> {
    return this.command({ type: "threads.list" }).then((r) => r.threads)
  }

  /**
   * Follows a thread: its store fills with the snapshot and every event after it, across
   * reconnects. Resolves once the server accepted the subscription. The snapshot holds the
   * latest `window` turns (the server's default, `TURN_WINDOW`, when not given); `loadOlderTurns`
   * adds the ones before.
   */
  follow(
    threadId: ThreadId,
    options?: { readonly fromStart?: boolean; readonly window?: number }
  ): Promise<ThreadStore> {
    return this.threads.follow(threadId, options)
  }

  /**
   * Loads the page of (at most `limit`) turns before what a followed thread's store holds into
   * it (`thread.history`); resolves with the page, or undefined when the store holds the whole
   * thread already. A page asked for before a snapshot replaced the store (a resubscribe) is
   * dropped, and undefined returned: the store's `olderTurns` then says where to go on from.
   */
  loadOlderTurns(threadId: ThreadId, limit?: number): Promise<ThreadHistoryPage | undefined> {
    return this.olderTurns.load(threadId, limit)
  }

  unfollow(threadId: ThreadId): Promise<void> {
    return this.threads.unfollow(threadId)
  }

  /**
   * Follows the thread list (`threads.subscribe`): a store of every thread with what waits on a
   * person in it, updated live as threads start anywhere (another tab, the CLI, another client),
   * change state, ask and are answered; kept across reconnects. The `inbox` then holds what waits
   * in every thread, followed or not. Resolves once the server sent the list.
   */
  followThreadList(): Promise<ThreadList> {
    if (this.threadList !== undefined) return this.threadList.subscribing ?? Promise.resolve(this.threadList.list)
    const followed = { list: new ThreadList(), subscribing: undefined }
    this.threadList = followed
    this.inbox.followList(followed.list)
    return this.subscribeThreadList(followed).catch((error: unknown) => {
      // Never followed: the next call tries again.
      if (this.threadList === followed) {
        this.threadList = undefined
        this.inbox.unfollowList()
      }
      throw error
    })
  }

  /** Stops following the thread list; the inbox keeps only the followed threads' entries. */
  async unfollowThreadList(): Promise<void> {
    if (this.threadList === undefined) return
    this.threadList = undefined
    this.inbox.unfollowList()
    await this.command({ type: "threads.unsubscribe" })
  }

  private subscribeThreadList(followed: {
    readonly list: ThreadList
    subscribing: Promise<ThreadList> | undefined
  }): Promise<ThreadList> {
    followed.list.subscribing()
    const subscribing = this.command({ type: "threads.subscribe" }).then(
      ({ threads }) => {
        followed.subscribing = undefined
        followed.list.replaceAll(threads)
        return followed.list
      },
      (error: unknown) => {
        followed.subscribing = undefined
        throw error
      }
    )
    followed.subscribing = subscribing
    return subscribing
  }

  /** Ends the connection for good: pending commands fail `closed`; what the socket still delivers is dropped. */
  close(): void {
    this.connection.end(new PlanbridgeError({ code: "closed", message: "the client was closed" }))
  }

  /**
   * Sends any command; resolves with its result, decoded with the command's `success` Schema in
   * the contracts' command table (`CommandTable`), rejects with a `PlanbridgeError` (`bad_frame`
   * for a result that is not one).
   */
  command<C extends Command>(command: C): Promise<CommandSuccess<C["type"]>> {
    if (this.connection.status === "closed")
      return Promise.reject(new PlanbridgeError({ code: "closed", message: "the client is closed" }))
    return new Promise((resolve, reject) => {
      const id = this.pending.add(command, resolve, reject)
      if (this.connection.status === "open") this.transmit(id)
      else this.pending.queue(id)
    })
  }

  // ---- what the server says ------------------------------------------------------------------

  private onWelcome(providers: ReadonlyArray<ProviderInfo>): void {
    this.providers_ = providers
    // Resume every followed thread from what it holds (a pending subscribe is sent below as is).
    this.threads.resubscribeAll(this.pending.subscribing())
    // The list as it is now, unless its subscribe is still pending (it is sent again below).
    if (this.threadList !== undefined && this.threadList.subscribing === undefined)
      void this.subscribeThreadList(this.threadList).catch(() => undefined)
    this.connection.welcomed()
    const ids = this.pending.takeQueued()
    for (const id of ids) this.transmit(id)
    this.welcomed?.resolve()
    this.welcomed = undefined
  }

  private transmit(id: string): void {
    const pending = this.pending.command(id)
    if (pending === undefined) return
    const command = pending.type === "thread.subscribe" ? this.threads.subscribeCommand(pending.threadId) : pending
    const text = JSON.stringify({ type: "command", id, command })
    const tooLarge = frameTooLarge(text, this.limits_)
    if (tooLarge !== undefined) return this.pending.reject(id, tooLarge)
    this.connection.send(text)
  }

  private onFrame(text: string): void {
    const decoded = decodeServerFrame(text)
    if ("error" in decoded) return this.options.onBadFrame?.(text, decoded.error)
    const frame = decoded.frame
    switch (frame.type) {
      case "welcome":
        this.limits_ = frame.limits
        return this.onWelcome(frame.providers)
      case "result":
        return this.pending.resolve(frame.id, frame.result)
      case "error": {
        if (frame.id === null) {
          if (frame.error.code === "protocol_version")
            this.connection.end(new PlanbridgeError({ code: frame.error.code, message: frame.error.message }))
          return
        }
        return this.pending.reject(
          frame.id,
          new PlanbridgeError({ code: frame.error.code, message: frame.error.message, path: frame.error.path })
        )
      }
      case "snapshot":
        return this.threads.get(frame.threadId)?.replace(frame.snapshot)
      case "threadEntry":
        return this.threadList?.list.put(frame.entry)
      case "event": {
        const store = this.threads.get(frame.threadId)
        if (store === undefined) return
        const outcome = store.apply(frame.seq, frame.event)
        if (outcome === "gap") this.threads.resubscribe(store)
        else if (outcome === "applied")
          for (const listener of [...this.eventListeners]) listener(frame.threadId, frame.event)
        return
      }
    }
  }
}

/**
 * The refusal of a command whose frame the server would refuse `frame_too_large` (said before
 * sending: a server older than `welcome.limits` answers it with `id: null`, which no command
 * could be matched to).
 */
const frameTooLarge = (text: string, limits: ServerLimits | undefined): PlanbridgeError | undefined => {
  if (limits === undefined || text.length <= limits.maxFrameBytes / 3) return undefined // UTF-8: ≤ 3 bytes a UTF-16 unit
  const bytes = new TextEncoder().encode(text).byteLength
  if (bytes <= limits.maxFrameBytes) return undefined
  const message = `the command's frame is ${bytes} bytes; the server takes at most ${limits.maxFrameBytes} (${Math.floor(limits.maxFrameBytes / 1024)} KiB)`
  return new PlanbridgeError({ code: "frame_too_large", message, path: ["command"] })
}

const newRequestId = (): string => globalThis.crypto.randomUUID()

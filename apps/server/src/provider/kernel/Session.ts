import { Effect } from "effect"
import { type AdapterError, adapterError } from "../AdapterError.ts"
import { mapPeerLines, type JsonRpcPeer } from "./JsonRpcPeer.ts"
import { stillAwaiting, type OpenRequest, type OpenRequests } from "./OpenRequests.ts"
import { makeSessionRunner, type ApplyOptions, type Guard, type SessionRunnerOptions } from "./SessionRunner.ts"
import type { TranscriptEntry } from "./transcript.ts"
import { definedFields } from "../../util/definedFields.ts"

export interface SessionOptions<State, Line, Reply> extends SessionRunnerOptions<State, Line, Reply> {
  /** The provider's last line (its exit): mapped once, however often it is offered (the reader, a finalizer). */
  readonly isExit: (line: Line) => boolean
  /** The native requests open in a state, which an answer must still find open. */
  readonly openRequests: (state: State) => OpenRequests<OpenRequest>
}

/**
 * A provider session, the same for every provider: its state lives in the kernel's
 * `SessionRunner` (record, then write), and what each provider did around it is here once: a
 * line of ours mapped before it is written (`send`), our answer to an open request (`answer`),
 * the exit mapped once (`exited`), and for JSON-RPC providers the reader and our requests
 * (`readPeer`, `callPeer`, below). A provider's session is this plus its own operations.
 */
export const makeSession = Effect.fn("Session.make")(function* <State, Line, Reply>(
  options: SessionOptions<State, Line, Reply>
) {
  const runner = yield* makeSessionRunner(options)
  let exited = false
  /** The exit is mapped once: the first offer claims it, a later one is refused. */
  const exitOnce = (line: Line): AdapterError | undefined => {
    if (!options.isExit(line)) return undefined
    if (exited) return adapterError("provider_exited", "the exit is mapped already")
    exited = true
    return undefined
  }
  const withExitOnce = <E>(line: Line, lineOptions: ApplyOptions<State, E> = {}): ApplyOptions<State, E> => ({
    ...lineOptions,
    guard: (state) => exitOnce(line) ?? lineOptions.guard?.(state)
  })
  const apply = <E = never>(line: Line, lineOptions?: ApplyOptions<State, E>) =>
    runner.apply(line, withExitOnce(line, lineOptions))
  return {
    apply,
    /** A burst of the provider's lines (the runner's `applyAll`); the lines whose events were not all recorded. */
    applyAll: (lines: ReadonlyArray<Line>) => runner.applyAll(lines, (line) => withExitOnce(line)),
    state: runner.state,
    peek: runner.peek,
    /** A line of ours (a message, a request): mapped, so recorded, first; then `write` runs. */
    send: <E = never>(line: Line, write: Effect.Effect<void, E>, guard?: Guard<State>) =>
      apply(line, { after: write, ...definedFields({ guard }) }).pipe(Effect.asVoid),
    /**
     * Our answer to `request`, once: under the lock it must still await us (the turn may have
     * ended since it was looked up); strict by default (a person's decision): if one of its
     * events cannot be recorded, nothing is committed or written and the request stays open.
     */
    answer: <E = never>(
      request: OpenRequest,
      line: Line,
      answerOptions: {
        readonly write?: Effect.Effect<void, E>
        readonly guard?: Guard<State>
        readonly strict?: boolean
      } = {}
    ) =>
      apply(line, {
        guard: (state) => stillAwaiting(options.openRequests(state), request) ?? answerOptions.guard?.(state),
        strict: answerOptions.strict ?? true,
        ...definedFields({ after: answerOptions.write })
      }).pipe(Effect.asVoid),
    /** Whether the exit was mapped. */
    exited: () => exited,
    isExit: options.isExit
  }
})

export type Session<State, Line> = Effect.Success<ReturnType<typeof makeSession<State, Line, never>>>

/**
 * The single reader of a JSON-RPC provider: its lines mapped strictly in order, a burst at a
 * time (`mapPeerLines`), until the session's exit; `unrecorded` gets the lines whose events
 * could not all be recorded.
 */
export const readPeer = <State, Line, PeerLine extends Line & TranscriptEntry>(
  session: Session<State, Line>,
  peer: JsonRpcPeer<PeerLine>,
  unrecorded: (lines: ReadonlyArray<Line>) => Effect.Effect<void> = () => Effect.void
) =>
  Effect.forkScoped(mapPeerLines(peer, (lines) => Effect.flatMap(session.applyAll(lines), unrecorded), session.isExit))

/**
 * A JSON-RPC request of ours through the session: mapped (so a replay sees it) as `ours(msg)`,
 * then written; its result once the provider's response was mapped. A request the guard
 * refuses is never sent, and forgotten.
 */
export const callPeer =
  <State, Line>(
    session: Session<State, Line>,
    peer: Pick<JsonRpcPeer<TranscriptEntry>, "prepareRequest" | "write">,
    ours: (msg: { readonly id: number; readonly method: string }) => Line
  ) =>
  (method: string, params: unknown, guard?: Guard<State>): Effect.Effect<unknown, AdapterError> =>
    Effect.gen(function* () {
      const request = peer.prepareRequest(method, params)
      yield* session
        .send(ours(request.msg), peer.write(request.msg), guard)
        .pipe(Effect.tapError(() => Effect.sync(request.release)))
      return yield* request.response
    })

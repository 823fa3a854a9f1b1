import type { RawNative } from "@planbridge/contracts"
import { Result, Schema } from "effect"
import { warningDraft, type EventDraft } from "./EventDraft.ts"
import type { Stepped } from "./SessionRunner.ts"

/**
 * The one mapping style, every provider's: a mapping function takes the state and gives a value,
 * the next state with its event drafts and the replies it owes the provider (none unless said).
 * Nothing is changed in place, so a line whose events cannot be recorded leaves nothing to undo.
 */
export interface Mapped<State, Reply> {
  readonly state: State
  readonly drafts: ReadonlyArray<EventDraft>
  readonly replies?: ReadonlyArray<Reply>
}

/** The state with its events (nothing owed to the provider). */
export const mapped = <State>(state: State, ...drafts: ReadonlyArray<EventDraft>) => ({ state, drafts })

/** A mapping function's value as a line's step (the runner's): its replies, then `more`. */
export const stepped = <State, Reply>(
  { state, drafts, replies = [] }: Mapped<State, Reply>,
  more: ReadonlyArray<Reply> = []
): Stepped<State, Reply> => ({ state, drafts, replies: [...replies, ...more] })

/** `first`, then `next` on its state: the events and replies of both, in order. */
export const andThen = <State, Reply>(
  first: Mapped<State, Reply>,
  next: (state: State) => Mapped<State, Reply>
): Stepped<State, Reply> => {
  const second = next(first.state)
  return {
    state: second.state,
    drafts: [...first.drafts, ...second.drafts],
    replies: [...(first.replies ?? []), ...(second.replies ?? [])]
  }
}

/** Each of `steps` on the state the one before left; their drafts and replies in order. */
export const chain = <State, Reply>(
  state: State,
  ...steps: ReadonlyArray<(state: State) => Mapped<State, Reply>>
): Stepped<State, Reply> =>
  steps.reduce<Stepped<State, Reply>>((done, next) => andThen(done, next), { state, drafts: [], replies: [] })

/** `step` on each of `items` in order, each on the state the one before left; their drafts and replies in order. */
export const each = <State, Reply, Item>(
  state: State,
  items: Iterable<Item>,
  step: (state: State, item: Item) => Mapped<State, Reply>
): Stepped<State, Reply> => chain(state, ...Array.from(items, (item) => (next: State) => step(next, item)))

/** The state with one `runtime.warning`: something native we could not use. */
export const warned = <State>(state: State, code: string, message: string, raw: RawNative, detail?: unknown) =>
  mapped(state, warningDraft(code, message, raw, detail))

/** `input` decoded by `schema`, then mapped by `then`; one that does not decode is `failed` with the Schema's message. */
export const decodedOr =
  <S extends Schema.Decoder<unknown>, A>(schema: S, failed: (message: string) => A) =>
  (input: unknown, then: (value: S["Type"]) => A): A =>
    Result.match(Schema.decodeUnknownResult(schema)(input), { onFailure: (f) => failed(f.message), onSuccess: then })

/** A `session.state.changed` draft (no detail). */
export const sessionStateDraft = (
  state: "idle" | "running" | "waiting" | "stopped",
  flags: ReadonlyArray<string>,
  raw: RawNative
): EventDraft => ({ type: "session.state.changed", raw, payload: { state, flags: [...flags] } })

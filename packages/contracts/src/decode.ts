import { Effect, Schema } from "effect"
import { RuntimeEvent, RuntimeEventTypes } from "./events.ts"
import { UserInputAnswer, UserInputPrompt } from "./prompt.ts"

/**
 * Decoders for the boundaries; failures are `SchemaError`s whose message names the path.
 * When the union rejects an input, the event type is checked on its own, so that an unknown
 * type is reported as such at `["type"]` rather than as a mismatch against all twenty-odd
 * members of the union. The valid path pays for one decode only.
 */
const EventTypeOnly = Schema.Struct({ type: Schema.Literals(RuntimeEventTypes) })
const decodeType = Schema.decodeUnknownEffect(EventTypeOnly)
const decodeTypeSync = Schema.decodeUnknownSync(EventTypeOnly)
const decodeUnion = Schema.decodeUnknownEffect(RuntimeEvent)
const decodeUnionSync = Schema.decodeUnknownSync(RuntimeEvent)

export const decodeRuntimeEvent = (input: unknown) =>
  decodeUnion(input).pipe(Effect.catch((error) => Effect.andThen(decodeType(input), () => Effect.fail(error))))
export const decodeRuntimeEventSync = (input: unknown): RuntimeEvent => {
  try {
    return decodeUnionSync(input)
  } catch (error) {
    decodeTypeSync(input)
    throw error
  }
}
export const encodeRuntimeEventSync = Schema.encodeSync(RuntimeEvent)
export const decodeUserInputPrompt = Schema.decodeUnknownEffect(UserInputPrompt)
export const decodeUserInputAnswer = Schema.decodeUnknownEffect(UserInputAnswer)

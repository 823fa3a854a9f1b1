import { Effect, Schema } from "effect"
import { RuntimeEvent, RuntimeEventTypes } from "./events.ts"
import { UserInputAnswer, UserInputPrompt } from "./prompt.ts"

/**
 * Decoders for the boundaries; failures are `SchemaError`s whose message names the path.
 * The event type is checked first so that an unknown type is reported as such at `["type"]`
 * rather than as a mismatch against all twenty-odd members of the union.
 */
const EventTypeOnly = Schema.Struct({ type: Schema.Literals(RuntimeEventTypes) })
const decodeType = Schema.decodeUnknownEffect(EventTypeOnly)
const decodeTypeSync = Schema.decodeUnknownSync(EventTypeOnly)
const decodeUnion = Schema.decodeUnknownEffect(RuntimeEvent)
const decodeUnionSync = Schema.decodeUnknownSync(RuntimeEvent)

export const decodeRuntimeEvent = (input: unknown) => Effect.andThen(decodeType(input), () => decodeUnion(input))
export const decodeRuntimeEventSync = (input: unknown): RuntimeEvent => {
  decodeTypeSync(input)
  return decodeUnionSync(input)
}
export const encodeRuntimeEventSync = Schema.encodeSync(RuntimeEvent)
export const decodeUserInputPrompt = Schema.decodeUnknownEffect(UserInputPrompt)
export const decodeUserInputAnswer = Schema.decodeUnknownEffect(UserInputAnswer)

import type { RuntimeEvent, UserInputAnswer } from "@planbridge/contracts"
import { Effect } from "effect"
import { checkAnswer } from "../../src/provider/kernel/CheckedAnswer.ts"
import { AdapterError, adapterError, type ProviderSession } from "../../src/provider/ProviderAdapter.ts"

/** A provider session whose `respondToUserInput` takes an answer as a client sends it. */
export type AnsweringSession<S extends ProviderSession> = Omit<S, "respondToUserInput"> & {
  readonly respondToUserInput: (answer: UserInputAnswer) => Effect.Effect<void, AdapterError>
}

/**
 * What the server does with an answer before a session sees it (SessionManager): it is checked
 * against the prompt the session emitted (the stored prompt), then handed over. A prompt that
 * was never requested, or is resolved already, is refused as not pending before it is checked,
 * as the server refuses it; a valid answer always reaches the session, which decides whether
 * its prompt is still open.
 */
export const answeringAsTheServer = <S extends ProviderSession>(
  session: S,
  events: ReadonlyArray<RuntimeEvent>
): AnsweringSession<S> =>
  Object.assign(Object.create(session) as S, {
    respondToUserInput: (answer: UserInputAnswer) =>
      Effect.suspend(() => {
        const requested = events.findLast(
          (e) => e.type === "user-input.requested" && e.payload.prompt.promptId === answer.promptId
        )
        const resolved = events.some((e) => e.type === "user-input.resolved" && e.payload.promptId === answer.promptId)
        if (requested?.type !== "user-input.requested") {
          const message = `prompt ${answer.promptId} is not pending`
          return Effect.fail(adapterError("prompt_not_pending", message))
        }
        const checked = checkAnswer(requested.payload.prompt, answer)
        if (checked.ok) return session.respondToUserInput(checked.checked)
        const error = resolved
          ? adapterError("prompt_not_pending", `prompt ${answer.promptId} is not pending`)
          : adapterError("invalid_answer", `${checked.error.message} at ${JSON.stringify(checked.error.path)}`)
        return Effect.fail(error)
      })
  })

import { OptionId, PromptId, QuestionId, type ResolvedBy } from "@planbridge/contracts"
import { Effect, Schema } from "effect"
import type { FastifyInstance } from "fastify"
import { Notifications } from "../notify/Notifications.ts"
import { commandError } from "../orchestration/CommandErrors.ts"
import { SessionManager } from "../orchestration/SessionManager.ts"
import { NotificationStore } from "../persistence/NotificationStore.ts"
import type { OperatorReply } from "./OperatorRoutes.ts"

/**
 * Where a notification's action answers (issue 29): the service worker posts the option the
 * person chose with the action's answer capability (notify/AnswerCapability.ts) instead of the
 * token, which a worker never holds. The one route under `/api` the token hook lets through
 * without the token (its Origin is still checked); the capability is its only key, and it
 * answers only the prompt, question and option it was made for, for a subscription that still
 * exists. The answer takes the same idempotent path as the page's, under the prompt's own
 * `clientRequestId` (`push:<promptId>`): a double tap gets the first outcome again, another
 * option from another device is refused `client_request_conflict`, and a prompt answered
 * elsewhere first is refused `unknown_prompt`/`already_resolved`. Recorded as `actor: user,
 * via: push` with the subscribing browser's client id.
 */
export const PUSH_ANSWER_PATH = "/api/push/answer"

const PushAnswerBody = Schema.Struct({
  promptId: PromptId,
  questionId: QuestionId,
  optionId: OptionId,
  answer: Schema.String.check(Schema.isNonEmpty(), Schema.isMaxLength(200))
})

/** The prompt's one push `clientRequestId`: every action on every device shares it. */
export const pushClientRequestId = (promptId: string): string => `push:${promptId}`

const refused = () => commandError("unauthorized", "the answer capability is not valid for this answer")

export const registerPushAnswerRoute = (app: FastifyInstance, reply: OperatorReply): void => {
  app.post(PUSH_ANSWER_PATH, (req, res) =>
    reply(
      res,
      Effect.gen(function* () {
        const body = yield* Schema.decodeUnknownEffect(PushAnswerBody)(req.body ?? {}).pipe(
          Effect.mapError((e) => commandError("invalid_frame", e.message))
        )
        const { promptId, questionId, optionId } = body
        const sinkId = (yield* Notifications).answerCapabilitySink(body.answer, { promptId, questionId, optionId })
        if (sinkId === undefined) return yield* Effect.fail(refused())
        // A removed subscription (a lost phone) takes its capabilities with it.
        const { sinks } = yield* (yield* NotificationStore).status(1)
        const sink = sinks.find((s) => s.sinkId === sinkId)
        if (sink === undefined) return yield* Effect.fail(refused())
        const by: ResolvedBy =
          sink.clientId === null
            ? { actor: "user", via: "push" }
            : { actor: "user", via: "push", clientId: sink.clientId }
        return yield* (yield* SessionManager).respondToUserInput(
          promptId,
          [{ questionId, selectedOptionIds: [optionId] }],
          pushClientRequestId(promptId),
          by
        )
      })
    )
  )
}

import { createHmac, timingSafeEqual } from "node:crypto"

/**
 * The answer capability of a push action (issue 29): what lets a service worker answer a prompt
 * from its notification without the server's token. One per action, made when a Web Push
 * message is sent (never stored: the outbox keeps the message without it) as
 * `<sinkId>.<HMAC-SHA256(push-answer-key, sink, prompt, question, option)>`. It answers that
 * prompt with that option and nothing else; it names the subscription it was sent to, so
 * removing the subscription revokes it, and the answer is recorded as that browser's. A prompt
 * is answered once (the `clientRequestId` path), so it is good for one answer.
 */
export interface AnswerTarget {
  readonly promptId: string
  readonly questionId: string
  readonly optionId: string
}

const macOf = (key: string, sinkId: string, target: AnswerTarget): Buffer =>
  createHmac("sha256", key)
    .update(["planbridge-push-answer/1", sinkId, target.promptId, target.questionId, target.optionId].join("\n"))
    .digest()

export const answerCapability = (key: string, sinkId: string, target: AnswerTarget): string =>
  `${sinkId}.${macOf(key, sinkId, target).toString("base64url")}`

/** The sink a capability was made for, when it was made by this key for exactly `target`; else undefined. */
export const verifyAnswerCapability = (key: string, capability: string, target: AnswerTarget): string | undefined => {
  const dot = capability.lastIndexOf(".")
  if (dot <= 0) return undefined
  const sinkId = capability.slice(0, dot)
  const given = Buffer.from(capability.slice(dot + 1), "base64url")
  const expected = macOf(key, sinkId, target)
  return given.length === expected.length && timingSafeEqual(given, expected) ? sinkId : undefined
}

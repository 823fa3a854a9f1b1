/** How many kinds of bad frame `badFrame` makes. */
export const BAD_FRAME_KINDS = 12

/** A real thread and a prompt pending on it, for bad frames that aim at live targets. */
export interface BadFrameTarget {
  readonly threadId: string
  readonly pendingPromptId: string
}

/**
 * A client frame the server must answer with a typed error, of kind `kind` (0 … 11): not JSON,
 * a batch, a command without a body, an unknown command, an invalid id, unknown targets, an
 * invalid answer, a negative cursor, an unknown provider, a turn on a thread that is not live, a
 * wrong protocol version. Without a target, the live-target kinds aim at missing ids instead.
 */
export const badFrame = (kind: number, i: number, target?: BadFrameTarget): string => {
  const id = `bad-${i}`
  const command = (body: object) => JSON.stringify({ type: "command", id, command: body })
  const threadId = target?.threadId ?? `missing-${i}`
  switch (kind % BAD_FRAME_KINDS) {
    case 0:
      return "{not json" + "x".repeat(i % 50)
    case 1:
      return JSON.stringify([1, 2, i])
    case 2:
      return JSON.stringify({ type: "command", id })
    case 3:
      return command({ type: "no.such.command" })
    case 4:
      return command({ type: "thread.subscribe", threadId: "" })
    case 5:
      return command({ type: "thread.subscribe", threadId: `missing-${i}` })
    case 6:
      return command({ type: "userInput.respond", promptId: `missing-${i}`, answers: [], clientRequestId: id })
    case 7:
      return command({
        type: "userInput.respond",
        promptId: target?.pendingPromptId ?? `missing-${i}`,
        answers: [{ questionId: "db", selectedOptionIds: [`nope-${i}`] }],
        clientRequestId: id
      })
    case 8:
      return command({ type: "thread.subscribe", threadId, afterSeq: -(i % 10) - 1 })
    case 9:
      return command({ type: "session.start", provider: "nonexistent", cwd: "/tmp", mode: "plan" })
    case 10:
      return command({ type: "turn.start", threadId, text: "hi" })
    default:
      return JSON.stringify({ type: "hello", protocolVersion: 99 })
  }
}

import { describe, expect, it } from "vitest"
import { messageLine, sentLine, type SentMessage } from "../../../src/provider/codex/CodexLine.ts"

/**
 * What we write is built classified (`sentLine`), never decoded back; the replay reads the same
 * message from the transcript with the decoding classifier (`messageLine`). Both must give the
 * mapping the same line, or a replay would not reproduce the live events.
 */
describe("Codex lines we send", () => {
  const sent: ReadonlyArray<SentMessage> = [
    { id: 3, method: "turn/start", params: { threadId: "t", input: [] } },
    { method: "initialized" },
    { id: "s-1", result: { answers: { q: { answers: ["A"] } } } },
    { id: 7, error: { code: -32000, message: "cancelled by the user" } }
  ]

  it.each(sent.map((msg) => [JSON.stringify(msg), msg] as const))("%s reads as the replay reads it", (_, msg) => {
    const replayed = messageLine("out", JSON.parse(JSON.stringify(msg)))
    expect(sentLine(msg)).toEqual(replayed)
    expect(replayed.dir === "out" && replayed.message.type).not.toBe("invalid")
  })
})

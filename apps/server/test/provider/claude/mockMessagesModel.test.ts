import { describe, expect, it } from "vitest"
import {
  lastToolResults,
  lastUserText,
  startMockMessagesModel,
  UNSCRIPTED_TEXT,
  withoutSystemReminders
} from "../../support/mockMessagesModel.ts"

/** The scripted Messages-API model itself (shared with the ACP tests), over real loopback HTTP. */
const post = async (baseUrl: string, path: string, body: unknown) => {
  const response = await fetch(`${baseUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  return response.text()
}
const sseEvents = (text: string) =>
  text
    .split("\n\n")
    .filter((chunk) => chunk.startsWith("event: "))
    .map(
      (chunk) =>
        JSON.parse(chunk.split("\ndata: ")[1] ?? "{}") as {
          type: string
          index?: number
          delta?: Record<string, string>
        }
    )

describe("mock Messages model", () => {
  it("streams scripted turns in order, answers auxiliary calls, and logs every request", async () => {
    const mock = await startMockMessagesModel()
    try {
      mock.script(
        {
          blocks: [
            { type: "text", text: "Hello there, this is long" },
            { type: "tool_use", name: "Ask", input: { q: 1 }, id: "toolu_1" }
          ]
        },
        (request) => ({ blocks: [{ type: "text", text: `echo: ${lastUserText(request)}` }] })
      )
      const tools = [{ name: "Ask" }]
      const first = sseEvents(
        await post(mock.baseUrl, "/v1/messages", { stream: true, tools, messages: [{ role: "user", content: "hi" }] })
      )
      expect(first.map((e) => e.type)[0]).toBe("message_start")
      expect(
        first
          .filter((e) => e.delta?.type === "text_delta")
          .map((e) => e.delta?.text)
          .join("")
      ).toBe("Hello there, this is long")
      expect(first.filter((e) => e.delta?.type === "text_delta").length).toBeGreaterThan(1)
      expect(
        first
          .filter((e) => e.delta?.type === "input_json_delta")
          .map((e) => e.delta?.partial_json)
          .join("")
      ).toBe('{"q":1}')
      expect(first.find((e) => e.type === "message_delta")?.delta).toMatchObject({ stop_reason: "tool_use" })

      const toolResult = {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_1", content: "answered<system-reminder>x</system-reminder>" }
        ]
      }
      const second = JSON.parse(
        await post(mock.baseUrl, "/v1/messages", { tools, messages: [toolResult, { role: "system", content: "s" }] })
      ) as { content: Array<{ text: string }> }
      expect(second.content[0]?.text).toBe("echo: answered<system-reminder>x</system-reminder>")
      expect(await post(mock.baseUrl, "/v1/messages/count_tokens", {})).toBe('{"input_tokens":10}')
      const title = JSON.parse(await post(mock.baseUrl, "/v1/messages", { messages: [] })) as {
        content: Array<{ text: string }>
      }
      expect(title.content[0]?.text).toBe("Mock title")
      const third = JSON.parse(await post(mock.baseUrl, "/v1/messages", { tools, messages: [] })) as {
        content: Array<{ text: string }>
      }
      expect(third.content[0]?.text).toBe(UNSCRIPTED_TEXT)

      expect(mock.requests.map((r) => r.kind)).toEqual(["main", "main", "count_tokens", "auxiliary", "main"])
      expect(lastToolResults(mock.mainRequests()[1]?.body ?? {}).map((r) => r.tool_use_id)).toEqual(["toolu_1"])
      expect(withoutSystemReminders("a <system-reminder>b</system-reminder>")).toBe("a")
      expect((await mock.waitForMainRequests(3)).length).toBe(3)
      expect(mock.pending()).toBe(0)
    } finally {
      await mock.close()
    }
  })
  it("a prompt suggestion, though it offers tools, leaves the scripted turn to the conversation", async () => {
    const mock = await startMockMessagesModel()
    try {
      mock.script({ blocks: [{ type: "text", text: "the planned turn" }] })
      const tools = [{ name: "Write" }]
      // What claude-agent-acp's CLI sends after a turn's result (CLI 2.1.318).
      const suggestion = "[SUGGESTION MODE: Suggest what the user might naturally type next into Claude Code.]"
      const forked = JSON.parse(
        await post(mock.baseUrl, "/v1/messages", { tools, messages: [{ role: "user", content: suggestion }] })
      ) as { content: Array<{ text: string }> }
      expect(forked.content[0]?.text).toBe("Mock title")
      expect(mock.pending()).toBe(1)
      const turn = JSON.parse(
        await post(mock.baseUrl, "/v1/messages", { tools, messages: [{ role: "user", content: "plan it" }] })
      ) as { content: Array<{ text: string }> }
      expect(turn.content[0]?.text).toBe("the planned turn")
      expect(mock.requests.map((r) => r.kind)).toEqual(["auxiliary", "main"])
    } finally {
      await mock.close()
    }
  })
})

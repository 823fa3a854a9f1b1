/**
 * What the scripted Cursor agent's `SCENARIO:MALFORMED` writes to stdout besides well-formed
 * messages: one line of each kind that is no JSON-RPC message, with the reason the client
 * must report for it. Shared by the agent and the test that checks each is reported once.
 */
export const SCRIPTED_SESSION_ID = "scripted-cursor-session-1"

const chunk = (text: string) =>
  `"params":{"sessionId":"${SCRIPTED_SESSION_ID}","update":` +
  `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"${text}"}}}`

export const MALFORMED: ReadonlyArray<{ readonly line: string; readonly reason: string }> = [
  { line: "this is not JSON", reason: "not_json" },
  // A session/update cut off in the middle of its text.
  { line: `{"jsonrpc":"2.0","method":"session/update",${chunk("lost")}`.slice(0, -12), reason: "not_json" },
  { line: `[{"jsonrpc":"2.0","method":"session/update",${chunk("batched")}}]`, reason: "batch" },
  { line: "42", reason: "not_object" },
  { line: '"x"', reason: "not_object" },
  { line: "null", reason: "not_object" },
  { line: '{"hello":"world"}', reason: "not_jsonrpc" },
  // Without `"jsonrpc":"2.0"` it is no JSON-RPC 2.0 message (the SDK refuses it as well).
  { line: `{"method":"session/update",${chunk("unversioned")}}`, reason: "not_jsonrpc" },
  // Longer than the part of a bad line the client keeps; multi-byte characters on the cut.
  { line: `not JSON either: ${"é".repeat(3000)}`, reason: "not_json" }
]

export const MALFORMED_LINES: ReadonlyArray<string> = MALFORMED.map((m) => m.line)

/**
 * `SCENARIO:BAD_FLOOD count=N`: N lines cycling through every kind of line the client cannot
 * use, each of which must become exactly one `runtime.warning` (code, and `detail.reason` for
 * an invalid line), and none of which may reach the console (the ACP SDK printed several).
 */
export const BAD_FLOOD: ReadonlyArray<{ readonly line: string; readonly code: string; readonly reason?: string }> = [
  { line: "not JSON {", code: "invalid_line", reason: "not_json" },
  { line: '[{"jsonrpc":"2.0","method":"session/update"}]', code: "invalid_line", reason: "batch" },
  { line: "42", code: "invalid_line", reason: "not_object" },
  { line: '{"hello":"world"}', code: "invalid_line", reason: "not_jsonrpc" },
  // Responses to nothing the client asked: the SDK printed "Got response to unknown request"
  // and "Invalid message" for these.
  { line: '{"jsonrpc":"2.0","id":987654,"result":{}}', code: "invalid_line", reason: "unknown_response" },
  {
    line: '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}',
    code: "invalid_line",
    reason: "unknown_response"
  },
  { line: '{"jsonrpc":"2.0","result":{}}', code: "invalid_line", reason: "unknown_response" },
  // A session/update whose params do not decode: the SDK printed "Error handling notification".
  {
    line:
      `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"${SCRIPTED_SESSION_ID}",` +
      `"update":{"sessionUpdate":"tool_call","title":"no id"}}}`,
    code: "update_invalid"
  }
]

export const badFloodLine = (i: number) => BAD_FLOOD[i % BAD_FLOOD.length]!

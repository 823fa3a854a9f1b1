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

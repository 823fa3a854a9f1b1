// A small stdio MCP server for the elicitation tests (issue 28), written with
// @modelcontextprotocol/sdk. Its tools ask the client through MCP elicitation and append what
// they received, one JSON line each, to the file named by PLANBRIDGE_MCP_OUT, so that a test
// reads exactly what reached the MCP server.
//   ask_form: a form with a plain field (`name`) and a secret one (`token`, named secret in the
//             request's `_meta`, see EVENTS.md "Secret answers"); answers what it got.
//   ask_url:  a URL-mode elicitation (a login page); on `accept`, it says the flow completed
//             (`notifications/elicitation/complete`) before the tool returns.
//   ping:     asks nothing; records each call (Codex's own tool-call approval is what is tested).
import { appendFileSync } from "node:fs"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"

const out = process.env.PLANBRIDGE_MCP_OUT
if (out === undefined || out === "") throw new Error("PLANBRIDGE_MCP_OUT is not set")
const record = (entry) => appendFileSync(out, `${JSON.stringify(entry)}\n`)

export const LOGIN_URL = "https://login.example.test/device?code=PB-28"
const ELICITATION_ID = "login-28"

const server = new McpServer({ name: "planbridge-eliciting-fixture", version: "1.0.0" })

server.registerTool("ask_form", { description: "Asks the user for a name and an API token." }, async () => {
  const result = await server.server.elicitInput({
    mode: "form",
    message: "Connect the fixture service",
    requestedSchema: {
      type: "object",
      properties: {
        name: { type: "string", title: "Account name" },
        token: { type: "string", title: "API token" }
      },
      required: ["name", "token"]
    },
    _meta: { "io.planbridge/secretFields": ["token"] }
  })
  record({ tool: "ask_form", result })
  return { content: [{ type: "text", text: `form ${result.action}` }] }
})

server.registerTool("ask_url", { description: "Asks the user to log in on a web page." }, async () => {
  const result = await server.server.elicitInput({
    mode: "url",
    message: "Log in to the fixture service",
    url: LOGIN_URL,
    elicitationId: ELICITATION_ID
  })
  record({ tool: "ask_url", result })
  if (result.action === "accept") await server.server.createElicitationCompletionNotifier(ELICITATION_ID)()
  return { content: [{ type: "text", text: `url ${result.action}` }] }
})

server.registerTool("ping", { description: "Answers pong." }, async () => {
  record({ tool: "ping" })
  return { content: [{ type: "text", text: "pong" }] }
})

await server.connect(new StdioServerTransport())

import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { readServerAddress, serverAddressFileIn } from "../../src/cli/serverAddress.ts"
import { DEMO_COMMAND_FILE, DEMO_PLAN_MARKDOWN } from "../../src/demo/scenarios.ts"
import { tempDirs } from "../support/fixtureHomes.ts"
import { startServer } from "../../src/http/HttpServer.ts"
import { assertLoopbackOnly } from "../support/loopbackOnly.ts"
import { connect } from "../support/wsClient.ts"
import { startEditor, updatesOf, type Editor } from "./acpEditor.ts"

/**
 * `planbridge acp --demo --data-dir D` with no server running on D: it runs the server itself
 * (the demo providers: the real Codex against the scripted model), records its address for the
 * other commands, and stops it when the editor closes stdin. The editor here has neither
 * elicitation nor `plan`: questions come as permission requests, the proposed plan as text.
 */

const STEP_MS = 120_000
const dirs = tempDirs()
let dataDir: string
let editor: Editor

beforeAll(async () => {
  assertLoopbackOnly()
  dataDir = dirs.make("acp-embedded")
  const env = { ...process.env }
  delete env.PLANBRIDGE_TOKEN
  editor = startEditor(["--demo", "--data-dir", dataDir], env)
  await editor.initialize({ fs: { readTextFile: false, writeTextFile: false }, terminal: false })
}, STEP_MS)

afterAll(async () => {
  await editor?.close()
  dirs.removeAll()
})

describe("planbridge acp with its own server on the data dir", () => {
  it("records the server's address; another client reaches it with the stored token", async () => {
    const recorded = readServerAddress(dataDir)
    if (recorded.kind !== "running") throw new Error(`no running server recorded: ${recorded.kind}`)
    expect(new URL(recorded.address.url).hostname).toBe("127.0.0.1")
    expect(JSON.stringify(recorded.address)).not.toContain('token":')
    const token = readFileSync(join(dataDir, "token"), "utf8").trim()
    const web = await connect({ url: recorded.address.url, token })
    await web.waitFor((f): f is typeof f => f.type === "welcome")
    await web.close()
  })

  it(
    "without elicitation: each question is a permission request with an option per choice; the plan is text",
    async () => {
      const cwd = dirs.make("acp-cwd")
      const { sessionId } = await editor.agent.request("session/new", { cwd, mcpServers: [] })
      await editor.agent.request("session/set_mode", { sessionId, modeId: "plan" })
      const turn = editor.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "Ask me questions, then plan." }]
      })
      for (const n of [0, 1]) {
        const asked = await editor.until(() => editor.permissions[n], `permission ${n}`, STEP_MS)
        expect(asked.params.options.at(-1)).toMatchObject({ optionId: "planbridge-skip", kind: "reject_once" })
        expect(asked.params.options.length).toBe(3)
        asked.reply({ outcome: { outcome: "selected", optionId: asked.params.options[1]!.optionId } })
      }
      expect(await turn).toEqual({ stopReason: "end_turn" })
      expect(updatesOf(editor, sessionId, "plan_update")).toHaveLength(0)
      const text = updatesOf(editor, sessionId, "agent_message_chunk")
        .map((u) => (u.content.type === "text" ? u.content.text : ""))
        .join("")
      expect(text).toContain(DEMO_PLAN_MARKDOWN.trim())
    },
    STEP_MS * 3
  )

  it(
    "an approval is a permission request with Codex's own options; allowing it runs the command",
    async () => {
      const cwd = dirs.make("acp-cwd")
      const { sessionId } = await editor.agent.request("session/new", { cwd, mcpServers: [] })
      const seen = editor.permissions.length
      const turn = editor.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "Run a command." }]
      })
      const asked = await editor.until(() => editor.permissions[seen], "the approval", STEP_MS)
      expect(asked.params.options.map((o) => o.optionId)).toContain("accept")
      asked.reply({ outcome: { outcome: "selected", optionId: "accept" } })
      expect(await turn).toEqual({ stopReason: "end_turn" })
      expect(readFileSync(join(cwd, DEMO_COMMAND_FILE), "utf8")).toBe("hello from the Planbridge demo\n")
    },
    STEP_MS * 2
  )

  it(
    "closing stdin stops the agent and its server cleanly (exit 0, the address file removed)",
    async () => {
      expect(await editor.close()).toBe(0)
      expect(existsSync(serverAddressFileIn(dataDir))).toBe(false)
      // Stdout carried ACP and nothing else: every line a JSON-RPC 2.0 message, none with the token.
      const token = readFileSync(join(dataDir, "token"), "utf8").trim()
      const lines = editor.stdout().trim().split("\n")
      expect(lines.length).toBeGreaterThan(10)
      for (const line of lines) expect(JSON.parse(line)).toMatchObject({ jsonrpc: "2.0" })
      expect(editor.stdout()).not.toContain(token)
    },
    STEP_MS
  )
})

describe("planbridge acp without a server to talk to", () => {
  const run = async (args: ReadonlyArray<string>) => {
    const env = { ...process.env }
    delete env.PLANBRIDGE_TOKEN
    const lonely = startEditor(args, env)
    const code = await new Promise<number | null>((resolve) => lonely.child.once("exit", resolve))
    return { code, stdout: lonely.stdout(), stderr: lonely.stderr() }
  }

  it(
    "nothing at --url: exit 1, the reason on stderr, nothing on stdout",
    async () => {
      const { code, stdout, stderr } = await run(["--url", "http://127.0.0.1:9", "--token", "t".repeat(43)])
      expect(code).toBe(1)
      expect(stdout).toBe("")
      expect(stderr).toContain("no Planbridge server answers at http://127.0.0.1:9")
      expect(stderr).not.toContain("t".repeat(43))
    },
    STEP_MS
  )

  it(
    "a wrong token: exit 1, the refusal on stderr without the token",
    async () => {
      const dir = dirs.make("acp-refused")
      const server = await startServer({ dataDir: dir, host: "127.0.0.1", port: 0, logLevel: "silent", providers: [] })
      try {
        const wrong = "w".repeat(43)
        const { code, stdout, stderr } = await run(["--url", server.url, "--token", wrong])
        expect(code).toBe(1)
        expect(stdout).toBe("")
        expect(stderr).toContain("refused the connection")
        expect(stderr).not.toContain(wrong)
      } finally {
        await server.close()
      }
    },
    STEP_MS
  )
})

// A Planbridge server in a process of its own (a test may SIGKILL it), offering the Cursor profile
// over the scripted agent in its lingering mode: the agent ignores the end of its stdin and starts
// a tool, and writes both pids to PIDS_FILE. Prints `{"port","token","recovered"}` as one line
// once it listens; stops cleanly on SIGTERM.
import { resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { startServer } from "../../src/http/HttpServer.ts"
import { makeAcpAdapter } from "../../src/provider/acp/AcpAdapter.ts"
import { cursorProfile } from "../../src/provider/acp/profiles/cursor.ts"

const [dataDir, pidsFile] = process.argv.slice(2)
if (dataDir === undefined || pidsFile === undefined) {
  throw new Error("usage: lingeringAgentServer.ts DATA_DIR PIDS_FILE")
}
const root = fileURLToPath(new URL("../../../../", import.meta.url))
const profile = cursorProfile({
  command: resolve(root, "node_modules/.bin/tsx"),
  args: [resolve(root, "apps/server/test/provider/acp/scriptedCursorAgent.ts")]
})
const env = {
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  CURSOR_API_KEY: "test-key",
  SCRIPTED_CURSOR_LINGER: "1",
  SCRIPTED_CURSOR_PIDS: pidsFile
}
const server = await startServer({
  dataDir,
  host: "127.0.0.1",
  port: 0,
  logLevel: "silent",
  providers: [{ adapter: makeAcpAdapter(profile, { env }), capabilities: profile.capabilities }]
})
const ready = { port: server.port, token: server.token, recovered: server.recovery.processGroups }
process.stdout.write(`${JSON.stringify(ready)}\n`)
process.once("SIGTERM", () => void server.close().then(() => process.exit(0)))

/**
 * The program the Claude login probe runs in a child Node process (`node --input-type=module -e`),
 * so that the server never loads the Claude Agent SDK (1.4 MB of JavaScript, ~30 MB of resident
 * memory that would stay for the server's life) just to learn whether the user is logged in.
 *
 * Its stdin: one JSON object, `{ env, cwd, pathToClaudeCodeExecutable? }`. It starts the CLI the
 * way the SDK starts it for a session, but loading no settings (so no hook runs and no MCP server
 * starts) and keeping no session on disk, with a prompt stream that never yields, waits for the
 * CLI's initialization, and writes one JSON line: `{ "account": … }` or `{ "error": "…" }`.
 * The CLI is the SDK's own child, in the probe's process group: ending the group ends both.
 * The SDK is resolved from the child's working directory, which the caller sets to a directory
 * under which Node finds this package's `node_modules`.
 */
export const CLAUDE_ACCOUNT_PROGRAM = `
const chunks = []
for await (const chunk of process.stdin) chunks.push(chunk)
const input = JSON.parse(Buffer.concat(chunks).toString("utf8"))
const reply = (value) => new Promise((done) => process.stdout.write(JSON.stringify(value) + "\\n", done))
try {
  const { query } = await import("@anthropic-ai/claude-agent-sdk")
  const silence = { [Symbol.asyncIterator]: () => ({ next: () => new Promise(() => {}) }) }
  const q = query({
    prompt: silence,
    options: {
      cwd: input.cwd,
      settingSources: [],
      persistSession: false,
      env: input.env,
      ...(input.pathToClaudeCodeExecutable === undefined ? {} : { pathToClaudeCodeExecutable: input.pathToClaudeCodeExecutable })
    }
  })
  try {
    const init = await q.initializationResult()
    await reply({ account: init.account ?? {} })
  } finally {
    q.close()
  }
} catch (error) {
  await reply({ error: String(error instanceof Error ? error.message : error) })
}
process.exit(0)
`

import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { assertLoopbackOnly } from "../support/loopbackOnly.ts"
import { connect, isEvent } from "../support/wsClient.ts"

/**
 * `planbridge serve --demo` as a user runs it: no key in the environment, the demo providers in
 * welcome, the web UI's address with the token in its fragment, a scenario played by the real
 * Codex app-server, and SIGTERM stopping it all (model servers and scratch homes included).
 */
const bin = fileURLToPath(new URL("../../bin/planbridge.mjs", import.meta.url))
const scratch = mkdtempSync(join(tmpdir(), "planbridge-serve-demo-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

describe("planbridge serve --demo", () => {
  it("needs no login: offers the labelled demo providers, prints the hand-over address, plays a scenario", async () => {
    assertLoopbackOnly()
    const env: NodeJS.ProcessEnv = { ...process.env }
    for (const name of [
      "OPENAI_API_KEY",
      "ANTHROPIC_API_KEY",
      "CURSOR_API_KEY",
      "CURSOR_AUTH_TOKEN",
      "PLANBRIDGE_TOKEN"
    ])
      delete env[name]
    const dataDir = join(scratch, "data")
    const child = spawn(
      process.execPath,
      [bin, "serve", "--demo", "--port", "0", "--log-level", "silent", "--data-dir", dataDir],
      {
        env
      }
    )
    let stdout = ""
    let stderr = ""
    child.stderr.on("data", (chunk: Buffer) => void (stderr += String(chunk)))
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
    await new Promise<void>((resolve, reject) => {
      child.stdout.on("data", (chunk: Buffer) => {
        stdout += String(chunk)
        if (stdout.includes("scenarios:")) resolve()
      })
      void exited.then(() => reject(new Error(`serve --demo exited before it listened: ${stderr}`)))
    })
    try {
      expect(stdout).toContain("demo mode: no login needed")
      expect(stdout).toMatch(/ {2}codex {6}offered {6}Codex \(demo\)\n/)
      const address = /web UI: (http:\/\/127\.0\.0\.1:\d+\/#token=[\w-]+) /.exec(stdout)?.[1]
      expect(address).toBeDefined()
      const url = new URL(address!)
      const token = url.hash.slice("#token=".length)
      // The page itself needs no token.
      expect((await fetch(`${url.origin}/`)).status).toBe(200)

      const client = await connect({ url: url.origin, token, tokenInHello: true })
      const welcome = client.frames.find((f) => f.type === "welcome")
      expect(welcome?.type === "welcome" && welcome.providers.map((p) => [p.provider, p.demo])).toEqual([
        ["codex", true],
        ["claude", true],
        ["acp-codex", true],
        ["acp-claude", true]
      ])
      const cwd = mkdtempSync(join(scratch, "cwd-"))
      const started = await client.command({ type: "session.start", provider: "codex", cwd, mode: "default" })
      if (started.type !== "result") throw new Error(JSON.stringify(started))
      const { threadId } = started.result as { threadId: string }
      await client.command({ type: "thread.subscribe", threadId: threadId as never })
      await client.command({ type: "turn.start", threadId: threadId as never, text: "Show me a checklist." })
      await client.waitFor(isEvent("turn.completed", threadId), 90_000)
      expect(client.frames.filter((f) => f.type === "event" && f.event.type === "turn.plan.updated")).toHaveLength(3)
      await client.close()
    } finally {
      child.kill("SIGTERM")
    }
    expect(await exited).toBe(0)
    expect(stderr).toBe("")
  }, 180_000)
})

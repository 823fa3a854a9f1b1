import { spawn, type ChildProcess } from "node:child_process"
import { utimesSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { accessTime, claudeOauthLogin, codexApiKeyLogin, tempDirs, writeFiles } from "../support/fixtureHomes.ts"
import { assertLoopbackOnly } from "../support/loopbackOnly.ts"
import { startMockMessagesModel, type MockMessagesModel } from "../support/mockMessagesModel.ts"
import { startMockResponsesModel, type MockResponsesModel } from "../support/mockResponsesModel.ts"
import { connect, isEvent } from "../support/wsClient.ts"

/**
 * `isolated` credentials mode never reads the user's logins: `planbridge serve` runs with HOME a
 * canary directory holding a Codex and a Claude login, and a Codex and a Claude turn run. Every
 * canary file and directory had its access time set to 2000-01-01 (equal to its modification
 * time, so that `relatime` updates it on the next read); afterwards they still say 2000.
 */
const bin = fileURLToPath(new URL("../../bin/planbridge.mjs", import.meta.url))
const dirs = tempDirs()
let responses: MockResponsesModel
let messages: MockMessagesModel
let child: ChildProcess | undefined

beforeAll(async () => {
  assertLoopbackOnly()
  responses = await startMockResponsesModel()
  messages = await startMockMessagesModel()
})
afterAll(async () => {
  child?.kill("SIGTERM")
  await Promise.all([responses?.close(), messages?.close()])
  dirs.removeAll()
})

const LONG_AGO = new Date("2000-01-01T00:00:00Z")
const CANARY = [".codex", ".codex/auth.json", ".codex/config.toml", ".claude", ".claude/.credentials.json"]

describe("isolated mode", () => {
  it("a Codex and a Claude turn read nothing of the user's HOME", async () => {
    const home = dirs.make("canary-home")
    writeFiles(home, { ".codex/auth.json": codexApiKeyLogin(), ".codex/config.toml": `model = "canary"\n` })
    writeFiles(join(home, ".claude"), claudeOauthLogin())
    for (const path of [...CANARY].reverse()) utimesSync(join(home, path), LONG_AGO, LONG_AGO)
    const token = "canary-token-0123456789abcdef0123456789"
    const env = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: home,
      OPENAI_API_KEY: "sk-isolated",
      PLANBRIDGE_CODEX_BASE_URL: responses.baseUrl,
      ANTHROPIC_API_KEY: "sk-ant-isolated",
      PLANBRIDGE_CLAUDE_BASE_URL: messages.baseUrl
    }
    const args = ["serve", "--port", "0", "--log-level", "silent", "--token", token, "--data-dir", dirs.make("data")]
    const proc = spawn(process.execPath, [bin, ...args], { env, cwd: dirs.make("cwd") })
    child = proc
    let stdout = ""
    const url = await new Promise<string>((resolve, reject) => {
      proc.stdout.on("data", (chunk: Buffer) => {
        stdout += String(chunk)
        const found = /listening on (http:\/\/\S+)/.exec(stdout)
        if (found !== null) resolve(found[1]!)
      })
      proc.once("exit", () => reject(new Error(`serve exited: ${stdout}`)))
    })
    // Implied by the base URLs, and said so.
    expect(stdout).toContain("credentials: isolated (PLANBRIDGE_CODEX_BASE_URL is set)")
    const client = await connect({ url, token })
    try {
      responses.script({ output: [{ type: "text", text: "Codex here." }] })
      messages.script({ blocks: [{ type: "text", text: "Claude here." }] })
      for (const provider of ["codex", "claude"] as const) {
        const cwd = dirs.make(`${provider}-cwd`)
        const start = await client.command({ type: "session.start", provider, cwd, mode: "default" })
        if (start.type !== "result") throw new Error(JSON.stringify(start))
        const { threadId } = start.result as { threadId: string }
        await client.command({ type: "thread.subscribe", threadId: threadId as never })
        await client.command({ type: "turn.start", threadId: threadId as never, text: "Hello" })
        const done = await client.waitFor(isEvent("turn.completed", threadId), 120_000)
        expect(done.event.type === "turn.completed" && done.event.payload.status).toBe("completed")
      }
    } finally {
      await client.close()
    }
    proc.kill("SIGTERM")
    await new Promise((resolve) => proc.once("exit", resolve))
    child = undefined
    expect(CANARY.filter((path) => accessTime(join(home, path)) !== LONG_AGO.getTime())).toEqual([])
    // The credentials the sessions used were Planbridge's own.
    expect(responses.responseRequests().map((r) => r.headers.authorization)).toEqual(["Bearer sk-isolated"])
    expect(messages.mainRequests().every((r) => r.headers["x-api-key"] === "sk-ant-isolated")).toBe(true)
  }, 240_000)
})

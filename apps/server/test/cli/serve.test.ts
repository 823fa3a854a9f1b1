import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { providerOffers } from "../../src/cli/providerOffers.ts"
import { providersFromEnv } from "../../src/cli/providersFromEnv.ts"

const bin = fileURLToPath(new URL("../../bin/planbridge.mjs", import.meta.url))
const scratch = mkdtempSync(join(tmpdir(), "planbridge-serve-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const PROVIDER_VARIABLES = ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "CURSOR_API_KEY", "CURSOR_AUTH_TOKEN"] as const

describe("which providers planbridge serve offers, and why", () => {
  it("the explanation and the server agree for every combination of set, empty and unset variables", () => {
    const states = [undefined, "", "k"] as const
    let combinations = 0
    for (let n = 0; n < states.length ** PROVIDER_VARIABLES.length; n++) {
      const env: Record<string, string> = {}
      PROVIDER_VARIABLES.forEach((name, i) => {
        const value = states[Math.floor(n / states.length ** i) % states.length]
        if (value !== undefined) env[name] = value
      })
      const offered = providerOffers(env)
        .filter((o) => o.offered)
        .map((o) => o.provider)
      expect(offered, JSON.stringify(env)).toEqual(providersFromEnv(env).map((p) => p.adapter.provider))
      combinations++
    }
    expect(combinations).toBe(81)
  })

  it("names the missing variable of each provider not offered", () => {
    expect(providerOffers({ CURSOR_API_KEY: "", CURSOR_AUTH_TOKEN: "t", ANTHROPIC_API_KEY: "" })).toEqual([
      { provider: "codex", offered: false, why: "OPENAI_API_KEY is not set" },
      { provider: "claude", offered: false, why: "ANTHROPIC_API_KEY is empty" },
      { provider: "cursor", offered: false, why: "CURSOR_API_KEY is empty (an empty one also hides CURSOR_AUTH_TOKEN)" }
    ])
    expect(providerOffers({ CURSOR_AUTH_TOKEN: "t", PLANBRIDGE_CURSOR_COMMAND: "/opt/cursor/agent" })[2]).toEqual({
      provider: "cursor",
      offered: true,
      why: "CURSOR_AUTH_TOKEN is set; sessions run `/opt/cursor/agent acp`"
    })
  })

  it("the start-up output names every provider, offered or not and why; SIGTERM stops it with exit 0", async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, OPENAI_API_KEY: "sk-test", PLANBRIDGE_CODEX_MODEL: "gpt-test" }
    for (const name of PROVIDER_VARIABLES.slice(1)) delete env[name]
    delete env.PLANBRIDGE_TOKEN
    const args = ["serve", "--credentials", "isolated", "--port", "0", "--log-level", "silent", "--data-dir", scratch]
    const child = spawn(process.execPath, [bin, ...args], { env })
    let stdout = ""
    let stderr = ""
    child.stderr.on("data", (chunk: Buffer) => void (stderr += String(chunk)))
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
    await new Promise<void>((resolve, reject) => {
      child.stdout.on("data", (chunk: Buffer) => {
        stdout += String(chunk)
        if (stdout.includes("  cursor ")) resolve()
      })
      void exited.then(() => reject(new Error(`serve exited before it listened: ${stderr}`)))
    })
    child.kill("SIGTERM")
    expect(await exited).toBe(0)
    expect(stderr).toBe("")
    const lines = stdout.trimEnd().split("\n")
    expect(lines[0]).toMatch(/^planbridge listening on http:\/\/127\.0\.0\.1:\d+ \(data dir .*\); recovered 0 prompts/)
    // The web UI's address carries the token in its fragment (never sent to a server), not in a query.
    expect(lines[1]).toMatch(
      /^web UI: http:\/\/127\.0\.0\.1:\d+\/#token=[\w-]{43} \(or: npx planbridge open --data-dir .*\)$/
    )
    expect(lines.slice(2)).toEqual([
      "credentials: isolated (--credentials)",
      "providers:",
      "  codex   offered      OPENAI_API_KEY is set; model gpt-test at https://api.openai.com/v1",
      "  claude  not offered  ANTHROPIC_API_KEY is not set",
      "  cursor  not offered  neither CURSOR_API_KEY nor CURSOR_AUTH_TOKEN is set"
    ])
  })
})

describe("planbridge serve in user credentials mode", () => {
  it("the default on loopback: says so, names a key that overrides a login, then each provider's login state", async () => {
    const home = mkdtempSync(join(scratch, "home-"))
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      ...(process.env.PLANBRIDGE_FROM_SOURCE === undefined
        ? {}
        : { PLANBRIDGE_FROM_SOURCE: process.env.PLANBRIDGE_FROM_SOURCE }),
      HOME: home,
      // Closed loopback port: the CLI's checks fail at once instead of waiting on DNS.
      ANTHROPIC_BASE_URL: "http://127.0.0.1:9",
      ANTHROPIC_API_KEY: "sk-ant-must-not-be-printed",
      CLAUDECODE: "1"
    }
    const args = ["serve", "--port", "0", "--log-level", "silent", "--data-dir", mkdtempSync(join(scratch, "data-"))]
    const child = spawn(process.execPath, [bin, ...args], { env })
    let stdout = ""
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
    await new Promise<void>((resolve, reject) => {
      child.stdout.on("data", (chunk: Buffer) => {
        stdout += String(chunk)
        if (/provider status:\n(.*\n){2}/.test(stdout)) resolve()
      })
      void exited.then(() => reject(new Error(`serve exited: ${stdout}`)))
    })
    child.kill("SIGTERM")
    expect(await exited).toBe(0)
    const lines = stdout.trimEnd().split("\n").slice(2)
    expect(lines.slice(0, 3)).toEqual([
      "credentials: user (the default on loopback)",
      "warning: ANTHROPIC_API_KEY is set: Claude uses it instead of a claude.ai login (unset it to use the login)",
      "providers:"
    ])
    expect(lines[3]).toBe(`  codex   offered      your own Codex login and config (~/.codex)`)
    expect(lines[4]).toBe(`  claude  offered      your own Claude Code login and settings (~/.claude)`)
    const status = lines.slice(lines.indexOf("provider status:") + 1)
    expect(status[0]).toMatch(/^ {2}codex +not ready unauthenticated — run `codex login`/)
    expect(status[1]).toBe("  claude       ready     authenticated apiKey (ANTHROPIC_API_KEY)")
    expect(stdout).not.toContain("sk-ant-must-not-be-printed")
  }, 120_000)

  it("a stop before the login probes answered exits 0, quietly, without their report", async () => {
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      // The sources, as every test runs them (not a dist/ built earlier).
      ...(process.env.PLANBRIDGE_FROM_SOURCE === undefined
        ? {}
        : { PLANBRIDGE_FROM_SOURCE: process.env.PLANBRIDGE_FROM_SOURCE }),
      HOME: mkdtempSync(join(scratch, "home-")),
      ANTHROPIC_BASE_URL: "http://127.0.0.1:9"
    }
    const args = ["serve", "--port", "0", "--log-level", "silent", "--data-dir", mkdtempSync(join(scratch, "data-"))]
    const child = spawn(process.execPath, [bin, ...args], { env })
    let stdout = ""
    let stderr = ""
    child.stderr.on("data", (chunk: Buffer) => void (stderr += String(chunk)))
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
    await new Promise<void>((resolve, reject) => {
      child.stdout.on("data", (chunk: Buffer) => {
        stdout += String(chunk)
        // Stopped as soon as it listens: the probes (short-lived Codex and Claude runs) are still out.
        if (stdout.includes("providers:\n")) resolve()
      })
      void exited.then(() => reject(new Error(`serve exited: ${stdout}`)))
    })
    child.kill("SIGTERM")
    expect(await exited).toBe(0)
    expect(stderr).toBe("")
    expect(stdout).not.toContain("provider status:")
  }, 60_000)
})

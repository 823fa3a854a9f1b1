import { execFile, spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { afterAll, describe, expect, it } from "vitest"
import { loadOrCreateToken } from "../../src/http/Security.ts"

/**
 * Each command loads only what it needs: `planbridge token` and `--help` must not pay for the
 * server (fastify), the store (drizzle, better-sqlite3) or any provider SDK. Measured for real:
 * the CLI runs as users run it, in a child process whose every loaded module is logged by a
 * `--import` hook (support/moduleLog.mjs); `rebuild` is the control showing the log sees them.
 */
const bin = fileURLToPath(new URL("../../bin/planbridge.mjs", import.meta.url))
const hook = fileURLToPath(new URL("./support/moduleLog.mjs", import.meta.url))
const scratch = mkdtempSync(join(tmpdir(), "planbridge-lazy-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const HEAVY_PACKAGES = [
  "@anthropic-ai/claude-agent-sdk",
  "@openai/codex",
  "@agentclientprotocol/sdk",
  "fastify",
  "@fastify/",
  "drizzle-orm",
  "better-sqlite3",
  "ws"
]
const isHeavy = (module: string) =>
  HEAVY_PACKAGES.some((name) => module.includes(`/node_modules/${name}${name.endsWith("/") ? "" : "/"}`)) ||
  module.includes("/apps/server/src/provider/")

let runs = 0
/** The modules `planbridge …args` loaded, and how it ended. */
const loadedBy = async (...args: ReadonlyArray<string>) => {
  const log = join(scratch, `modules-${++runs}.log`)
  const { stdout } = await promisify(execFile)(process.execPath, ["--import", hook, bin, ...args], {
    env: { ...process.env, PLANBRIDGE_MODULE_LOG: log },
    encoding: "utf8"
  })
  const modules = [
    ...new Set(
      readFileSync(log, "utf8")
        .split("\n")
        .filter((line) => line !== "")
    )
  ]
  return { stdout, modules, heavy: modules.filter(isHeavy) }
}

describe("what each command loads", () => {
  it("planbridge token loads no provider SDK, no fastify, no drizzle", async () => {
    loadOrCreateToken(join(scratch, "data"))
    const run = await loadedBy("token", "--data-dir", join(scratch, "data"))
    expect(run.stdout).toMatch(/^[\w-]{43}\n$/)
    expect(run.modules.some((m) => m.endsWith("/src/http/Security.ts"))).toBe(true)
    expect(run.heavy).toEqual([])
  })

  it("planbridge --help and 'serve --help' load none of them either", async () => {
    for (const args of [["--help"], ["serve", "--help"]]) {
      const run = await loadedBy(...args)
      expect(run.stdout).toContain("USAGE")
      expect(run.heavy, args.join(" ")).toEqual([])
    }
  })

  it("control: the log does see a heavy module when a command loads one (rebuild opens the store)", async () => {
    const run = await loadedBy("rebuild", "--data-dir", join(scratch, "store"))
    expect(run.stdout).toContain("rebuilt projections")
    expect(run.heavy.some((m) => m.includes("/node_modules/drizzle-orm/"))).toBe(true)
    expect(run.heavy.some((m) => m.includes("/node_modules/better-sqlite3/"))).toBe(true)
  })

  it("serve answers, and idles, without loading a provider's adapter, or web-push once its keys exist", async () => {
    // Every provider offered (isolated keys: their login probes start no program), none started.
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      OPENAI_API_KEY: "k",
      ANTHROPIC_API_KEY: "k",
      CURSOR_API_KEY: "k",
      PLANBRIDGE_CURSOR_COMMAND: "/nonexistent/agent"
    }
    delete env.PLANBRIDGE_TOKEN
    const dataDir = join(scratch, "serve")
    const serveOnce = async () => {
      const log = join(scratch, `modules-${++runs}.log`)
      const args = ["serve", "--credentials", "isolated", "--port", "0", "--log-level", "silent", "--data-dir", dataDir]
      const child = spawn(process.execPath, ["--import", hook, bin, ...args], {
        env: { ...env, PLANBRIDGE_MODULE_LOG: log }
      })
      const exited = new Promise<number | null>((resolve) => child.once("exit", resolve))
      const url = await new Promise<string>((resolve, reject) => {
        let out = ""
        child.stdout.on("data", (chunk: Buffer) => {
          out += String(chunk)
          const match = /listening on (http:\/\/\S+)/.exec(out)
          if (match !== null && out.includes("  cursor ")) resolve(match[1]!)
        })
        void exited.then((code) => reject(new Error(`serve exited with ${code}`)))
      })
      const token = readFileSync(join(dataDir, "token"), "utf8").trim()
      const listed = (await (
        await fetch(`${url}/api/providers`, { headers: { authorization: `Bearer ${token}` } })
      ).json()) as { providers: ReadonlyArray<{ provider: string; ready?: boolean }> }
      child.kill("SIGTERM")
      expect(await exited).toBe(0)
      return { listed: listed.providers, modules: readFileSync(log, "utf8").split("\n") }
    }
    const adapterModules = (modules: ReadonlyArray<string>) =>
      modules.filter((m) => /\/src\/provider\/(codex|claude|acp)\/\w+(Adapter|Session|Mapping)\.ts$/.test(m))
    // The first start makes the data dir's VAPID key pair (web-push); the second only reads it.
    const first = await serveOnce()
    expect(first.listed.map((p) => [p.provider, p.ready])).toEqual([
      ["codex", true],
      ["claude", true],
      ["cursor", undefined]
    ])
    expect(adapterModules(first.modules)).toEqual([])
    const second = await serveOnce()
    expect(adapterModules(second.modules)).toEqual([])
    expect(second.modules.filter((m) => m.includes("/node_modules/web-push/"))).toEqual([])
    // Control: the log does see web-push when it is loaded (the first start makes the key pair with it).
    expect(first.modules.some((m) => m.includes("/node_modules/web-push/"))).toBe(true)
  })
})

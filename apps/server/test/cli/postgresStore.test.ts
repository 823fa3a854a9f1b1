import { spawn } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startServer } from "../../src/http/HttpServer.ts"
import { startPostgres, type TestPostgres } from "../support/postgres.ts"
import { runCli } from "./support/runCli.ts"

const root = fileURLToPath(new URL("../../../../", import.meta.url))
const bin = fileURLToPath(new URL("../../bin/planbridge.mjs", import.meta.url))
const scratch = mkdtempSync(join(tmpdir(), "planbridge-pgcli-"))
let postgres: TestPostgres
beforeAll(async () => {
  postgres = await startPostgres()
})
afterAll(() => {
  postgres?.stop()
  rmSync(scratch, { recursive: true, force: true })
})

const transcript = join(
  root,
  "fixtures",
  "codex",
  readdirSync(join(root, "fixtures", "codex")).find((f) => f.endsWith(".jsonl") && !f.endsWith(".events.jsonl"))!
)
const golden = readFileSync(transcript.replace(/\.jsonl$/, ".events.jsonl"), "utf8")
  .trim()
  .split("\n")
const threadId = (JSON.parse(golden[0]!) as { threadId: string }).threadId

describe("planbridge --store postgres://…", () => {
  it("replay persists into PostgreSQL once, rebuild finds identical projections, PLANBRIDGE_STORE stands for --store", async () => {
    const url = await postgres.createDatabase("cli_replay")
    const first = await runCli("replay", transcript, "--thread-id", threadId, "--store", url)
    expect(first.code).toBe(0)
    expect(first.stderr).toContain(`persisted ${golden.length} events (0 already there)`)
    const second = await runCli("replay", transcript, "--thread-id", threadId, "--store", url)
    expect(second.stderr).toContain(`persisted 0 events (${golden.length} already there)`)
    expect(await runCli("rebuild", "--store", url)).toMatchObject({
      code: 0,
      stdout: `rebuilt projections from ${golden.length} events: identical\n`
    })
    process.env.PLANBRIDGE_STORE = url
    const viaEnv = await runCli("rebuild", "--dry-run", "--data-dir", scratch).finally(
      () => delete process.env.PLANBRIDGE_STORE
    )
    expect(viaEnv).toMatchObject({ code: 0, stdout: `rebuilt projections from ${golden.length} events: identical\n` })
  })

  it("a store that is not a postgres:// URL, or a database that cannot be reached, fails with a message and no password", async () => {
    const other = await runCli("rebuild", "--store", "mysql://root:hunter2@127.0.0.1/x", "--data-dir", scratch)
    expect(other.code).toBe(1)
    expect(other.stderr).toContain("must be a postgres:// URL")
    expect(other.stderr).not.toContain("hunter2")
    const unreachable = await runCli(
      "rebuild",
      "--store",
      "postgres://u:hunter2@127.0.0.1:9/none",
      "--data-dir",
      scratch
    )
    expect(unreachable.code).toBe(1)
    expect(unreachable.stderr).toMatch(/cannot open postgres:\/\/u:\*\*\*@127\.0\.0\.1:9\/none/)
    expect(unreachable.stderr).not.toContain("hunter2")
  })

  it("serve --store: the server's threads are the database's (a thread replayed into it is listed); a second server on it is a replica that sees them too", async () => {
    const url = await postgres.createDatabase("cli_serve")
    expect((await runCli("replay", transcript, "--thread-id", threadId, "--store", url)).code).toBe(0)
    const dataDir = mkdtempSync(join(scratch, "data-"))
    const args = ["serve", "--credentials", "isolated", "--port", "0", "--log-level", "silent", "--data-dir", dataDir]
    const child = spawn(process.execPath, [bin, ...args, "--store", url, "--token", "t".repeat(32)], {
      env: { ...process.env, PLANBRIDGE_TOKEN: "" }
    })
    let stdout = ""
    let stderr = ""
    child.stderr.on("data", (chunk: Buffer) => void (stderr += String(chunk)))
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
    const address = await new Promise<string>((resolve, reject) => {
      child.stdout.on("data", (chunk: Buffer) => {
        stdout += String(chunk)
        const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout)
        if (match) resolve(match[1]!)
      })
      void exited.then(() => reject(new Error(`serve exited before it listened: ${stderr}`)))
    })
    // The start-up line names the store, without its password (there is none here: trust on loopback).
    expect(stdout).toContain(`, store ${url}); recovered 0 prompts`)
    try {
      // A second server on the same database with the same token is a replica: it starts, recovers
      // nothing of the first's, and lists the same threads.
      const second = await startServer({
        dataDir: mkdtempSync(join(scratch, "data-")),
        store: url,
        host: "127.0.0.1",
        port: 0,
        token: "t".repeat(32),
        providers: [],
        logLevel: "silent"
      })
      try {
        expect(second.recovery).toMatchObject({ prompts: 0, sessions: 0 })
        const listed = await fetch(`${second.url}/api/threads`, {
          headers: { authorization: `Bearer ${"t".repeat(32)}` }
        })
        const { threads } = (await listed.json()) as { threads: Array<{ threadId: string }> }
        expect(threads.map((t) => t.threadId)).toEqual([threadId])
      } finally {
        await second.close()
      }
      const res = await fetch(`${address}/api/threads`, { headers: { authorization: `Bearer ${"t".repeat(32)}` } })
      expect(res.status).toBe(200)
      const body = (await res.json()) as { threads: Array<{ threadId: string }> }
      expect(body.threads.map((t) => t.threadId)).toEqual([threadId])
      // The data dir has no SQLite database: the log is in PostgreSQL.
      expect(readdirSync(dataDir).filter((f) => f.startsWith("planbridge.db"))).toEqual([])
    } finally {
      child.kill("SIGTERM")
    }
    expect(await exited).toBe(0)
    expect(stderr).toBe("")
  })

  it("a lease time that is not a whole number of ms from 500 to 600000 is a usage error that names the variable", async () => {
    for (const value of ["abc", "100", "15.5", "700000"]) {
      process.env.PLANBRIDGE_LEASE_TTL_MS = value
      const run = await runCli("serve", "--port", "0", "--data-dir", mkdtempSync(join(scratch, "ttl-"))).finally(
        () => delete process.env.PLANBRIDGE_LEASE_TTL_MS
      )
      expect(run.code).toBe(2)
      expect(run.stderr).toContain(
        `PLANBRIDGE_LEASE_TTL_MS must be a whole number of milliseconds from 500 to 600000, not '${value}'`
      )
    }
  })
})

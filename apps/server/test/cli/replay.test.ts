import { execFileSync } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"

const root = fileURLToPath(new URL("../../../../", import.meta.url))
const bin = join(root, "apps/server/bin/planbridge.mjs")
const dirs: Array<string> = []
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))

const run = (...args: Array<string>) => {
  try {
    return { code: 0, stdout: execFileSync(process.execPath, [bin, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }), stderr: "" }
  } catch (error) {
    const e = error as { status: number; stdout: string; stderr: string }
    return { code: e.status, stdout: e.stdout, stderr: e.stderr }
  }
}

/** One fixture per provider folder, with its golden output. */
const fixtures = ["codex", "claude", "cursor", "acp"].map((dir) => {
  const name = readdirSync(join(root, "fixtures", dir)).find((f) => f.endsWith(".jsonl") && !f.endsWith(".events.jsonl"))!
  return { dir, transcript: join(root, "fixtures", dir, name), golden: join(root, "fixtures", dir, name.replace(/\.jsonl$/, ".events.jsonl")) }
})

describe("planbridge replay (CLI)", () => {
  for (const f of fixtures) {
    it(`${f.dir}: prints exactly the golden events, and persists them once with --data-dir`, () => {
      const golden = readFileSync(f.golden, "utf8").trim().split("\n")
      const threadId = (JSON.parse(golden[0]!) as { threadId: string }).threadId
      const printed = run("replay", f.transcript, "--thread-id", threadId)
      expect(printed.code).toBe(0)
      expect(printed.stdout.trim().split("\n").map((l) => JSON.parse(l))).toEqual(golden.map((l) => JSON.parse(l)))

      const dataDir = mkdtempSync(join(tmpdir(), "planbridge-replay-"))
      dirs.push(dataDir)
      const first = run("replay", f.transcript, "--thread-id", threadId, "--data-dir", dataDir)
      expect(first.code).toBe(0)
      const second = run("replay", f.transcript, "--thread-id", threadId, "--data-dir", dataDir)
      expect(second.code).toBe(0)
      expect(run("rebuild", "--data-dir", dataDir)).toMatchObject({ code: 0, stdout: `rebuilt projections from ${golden.length} events: identical\n` })
    })
  }

  it("refuses a file that is not a transcript, naming the line", () => {
    const dir = mkdtempSync(join(tmpdir(), "planbridge-replay-bad-"))
    dirs.push(dir)
    writeFileSync(join(dir, "bad.jsonl"), `{"dir":"meta","provider":"codex","startedAt":"2026-11-30T00:00:00.000Z"}\nnot json\n`)
    expect(run("replay", join(dir, "bad.jsonl"))).toMatchObject({ code: 1, stderr: expect.stringContaining("bad.jsonl:2: not JSON") })
    writeFileSync(join(dir, "nometa.jsonl"), `{"t_ms":1,"dir":"s2c","msg":{}}\n`)
    expect(run("replay", join(dir, "nometa.jsonl"))).toMatchObject({ code: 1, stderr: expect.stringContaining("meta line") })
    writeFileSync(join(dir, "other.jsonl"), `{"dir":"meta","provider":"gemini"}\n`)
    expect(run("replay", join(dir, "other.jsonl"))).toMatchObject({ code: 1, stderr: expect.stringContaining("no replayer for provider 'gemini'") })
    expect(run("replay")).toMatchObject({ code: 1 })
  })
})

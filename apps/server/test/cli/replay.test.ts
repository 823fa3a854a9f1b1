import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { main } from "../../src/cli/main.ts"

const root = fileURLToPath(new URL("../../../../", import.meta.url))
const dirs: Array<string> = []
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))

/** Runs the CLI in this process (as `planbridge …` would), capturing what it prints. */
const run = async (...args: Array<string>) => {
  const out: Array<string> = []
  const err: Array<string> = []
  const write = { stdout: process.stdout.write, stderr: process.stderr.write }
  process.stdout.write = ((chunk: string | Uint8Array) => (
    out.push(String(chunk)),
    true
  )) as typeof process.stdout.write
  process.stderr.write = ((chunk: string | Uint8Array) => (
    err.push(String(chunk)),
    true
  )) as typeof process.stderr.write
  try {
    const code = await main(args)
    return { code, stdout: out.join(""), stderr: err.join("") }
  } finally {
    process.stdout.write = write.stdout
    process.stderr.write = write.stderr
  }
}

/** One fixture per provider folder, with its golden output. */
const fixtures = ["codex", "claude", "cursor", "acp"].map((dir) => {
  const name = readdirSync(join(root, "fixtures", dir)).find(
    (f) => f.endsWith(".jsonl") && !f.endsWith(".events.jsonl")
  )!
  return {
    dir,
    transcript: join(root, "fixtures", dir, name),
    golden: join(root, "fixtures", dir, name.replace(/\.jsonl$/, ".events.jsonl"))
  }
})

describe("planbridge replay (CLI)", () => {
  for (const f of fixtures) {
    it(`${f.dir}: prints exactly the golden events, and persists them once with --data-dir`, async () => {
      const golden = readFileSync(f.golden, "utf8").trim().split("\n")
      const threadId = (JSON.parse(golden[0]!) as { threadId: string }).threadId
      const printed = await run("replay", f.transcript, "--thread-id", threadId)
      expect(printed.code).toBe(0)
      expect(
        printed.stdout
          .trim()
          .split("\n")
          .map((l) => JSON.parse(l))
      ).toEqual(golden.map((l) => JSON.parse(l)))

      const dataDir = mkdtempSync(join(tmpdir(), "planbridge-replay-"))
      dirs.push(dataDir)
      const first = await run("replay", f.transcript, "--thread-id", threadId, "--data-dir", dataDir)
      expect(first.code).toBe(0)
      const second = await run("replay", f.transcript, "--thread-id", threadId, "--data-dir", dataDir)
      expect(second.code).toBe(0)
      expect(first.stderr).toContain(`persisted ${golden.length} events (0 already there)`)
      expect(second.stderr).toContain(`persisted 0 events (${golden.length} already there)`)
      expect(await run("rebuild", "--data-dir", dataDir)).toMatchObject({
        code: 0,
        stdout: `rebuilt projections from ${golden.length} events: identical\n`
      })
    })
  }

  it("refuses a file that is not a transcript, naming the line", async () => {
    const dir = mkdtempSync(join(tmpdir(), "planbridge-replay-bad-"))
    dirs.push(dir)
    writeFileSync(
      join(dir, "bad.jsonl"),
      `{"dir":"meta","provider":"codex","startedAt":"2026-11-30T00:00:00.000Z"}\nnot json\n`
    )
    expect(await run("replay", join(dir, "bad.jsonl"))).toMatchObject({
      code: 1,
      stderr: expect.stringContaining("bad.jsonl:2: not JSON")
    })
    writeFileSync(join(dir, "nometa.jsonl"), `{"t":1,"dir":"in","msg":{}}\n`)
    expect(await run("replay", join(dir, "nometa.jsonl"))).toMatchObject({
      code: 1,
      stderr: expect.stringContaining("meta line")
    })
    writeFileSync(join(dir, "other.jsonl"), `{"dir":"meta","provider":"gemini"}\n`)
    expect(await run("replay", join(dir, "other.jsonl"))).toMatchObject({
      code: 1,
      stderr: expect.stringContaining("no replayer for provider 'gemini'")
    })
    // A missing FILE is a usage error, exit 2 like every usage error (it was 1 before the CLI's library).
    const missing = await run("replay")
    expect(missing).toMatchObject({ code: 2, stdout: "", stderr: expect.stringContaining("required argument: FILE") })
  })
})

describe("planbridge record (CLI)", () => {
  it("writes a thread of the log as a transcript whose replay is the same events, without raw", async () => {
    const f = fixtures.find((x) => x.dir === "claude")!
    const golden = readFileSync(f.golden, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>)
    const dataDir = mkdtempSync(join(tmpdir(), "planbridge-record-"))
    dirs.push(dataDir)
    // The session as the log holds it (the golden thread, so its ids are the golden ones).
    const live = String(golden[0]!.threadId)
    expect((await run("replay", f.transcript, "--thread-id", live, "--data-dir", dataDir)).code).toBe(0)
    const out = join(dataDir, "recordings", "claude", "session.jsonl")
    const written = await run("record", live, "--data-dir", dataDir, "--out", out)
    expect(written).toMatchObject({
      code: 0,
      stderr: `recorded ${golden.length} events of thread '${live}' in ${out}\n`
    })
    const text = readFileSync(out, "utf8")
    expect(text).not.toContain('"raw"')
    expect(JSON.parse(text.split("\n")[0]!)).toMatchObject({
      dir: "meta",
      provider: "planbridge",
      recordedProvider: "claude"
    })

    const replayed = await run("replay", out, "--thread-id", "t-again")
    expect(replayed.code).toBe(0)
    const strip = ({ raw: _r, eventId: _e, createdAt: _c, threadId: _t, ...rest }: Record<string, unknown>) => rest
    const events = replayed.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>)
    expect(events.map(strip)).toEqual(golden.map(strip))
    // The recorded pace is kept: each event at its original offset from the first.
    const offsets = (list: ReadonlyArray<Record<string, unknown>>) =>
      list.map((e) => Date.parse(String(e.createdAt)) - Date.parse(String(list[0]!.createdAt)))
    expect(offsets(events)).toEqual(offsets(golden))
  })

  it("refuses a thread the log does not have", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "planbridge-record-none-"))
    dirs.push(dataDir)
    const f = fixtures[0]!
    expect((await run("replay", f.transcript, "--data-dir", dataDir)).code).toBe(0)
    expect(await run("record", "no-such-thread", "--data-dir", dataDir)).toMatchObject({
      code: 1,
      stdout: "",
      stderr: "planbridge record: no thread 'no-such-thread' in the log\n"
    })
  })
})

import { Effect } from "effect"
import { spawn } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"
import { RuntimeIngestion } from "../../src/orchestration/RuntimeIngestion.ts"
import { recoverAfterRestart } from "../../src/orchestration/StartupRecovery.ts"
import { Database } from "../../src/persistence/Database.ts"
import { OperatorQueries } from "../../src/persistence/OperatorQueries.ts"
import { ProjectionRebuild } from "../../src/persistence/ProjectionRebuild.ts"
import { catchUpProjections } from "../../src/persistence/ProjectionLag.ts"
import { generateEventMix } from "../support/eventMix.ts"
import { runWithIngestion, tempDir } from "../support/ingestionRuntime.ts"

const cleanups: Array<() => void> = []
afterEach(() => cleanups.splice(0).forEach((f) => f()))
const newDir = () => {
  const t = tempDir("durable")
  cleanups.push(t.cleanup)
  return t.dir
}

const child = fileURLToPath(new URL("./children/ingestForever.ts", import.meta.url))

/** Starts the ingesting child, waits until it has committed at least `after` events, kills it with SIGKILL. */
const ingestThenKill = (file: string, seed: number, after: number) =>
  new Promise<number>((resolve, reject) => {
    // node itself with the tsx loader (not the tsx wrapper, which would leave its node child running).
    const proc = spawn(process.execPath, ["--import", "tsx", child, file, String(seed)], {
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stderr = ""
    proc.stderr.on("data", (d) => (stderr += String(d)))
    let reported = 0
    createInterface({ input: proc.stdout }).on("line", (line) => {
      reported = Number(line.replace("committed ", ""))
      if (reported >= after && proc.exitCode === null && !proc.killed) proc.kill("SIGKILL")
    })
    proc.on("exit", (_code, signal) =>
      signal === "SIGKILL" ? resolve(reported) : reject(new Error(`child ended without being killed: ${stderr}`))
    )
  })

describe("durability", () => {
  it("a child killed with SIGKILL mid-ingestion leaves no gap, no duplicate and no half-applied event", async () => {
    const dir = newDir()
    const file = `${dir}/planbridge.db`
    for (const [seed, after] of [
      [21, 700],
      [22, 1900]
    ] as const) {
      const acknowledged = await ingestThenKill(file, seed, after)
      const expected = generateEventMix({ seed, count: 200_000, threads: 8 })
      await runWithIngestion(
        file,
        Effect.gen(function* () {
          const { sqlite } = yield* Database
          const rows = sqlite
            .prepare("select seq, event_id, thread_id, thread_seq from events where event_id like ? order by seq")
            .all(`s${seed}-%`) as Array<{
            seq: number
            event_id: string
            thread_id: string
            thread_seq: number
          }>
          // Everything acknowledged is there, and what is there is exactly a prefix of what was sent.
          expect(rows.length).toBeGreaterThanOrEqual(acknowledged)
          expect(rows.map((r) => r.event_id)).toEqual(expected.slice(0, rows.length).map((e) => e.eventId))
          // Global and per-thread sequences have no gap.
          const all = sqlite.prepare("select seq from events order by seq").all() as Array<{ seq: number }>
          expect(all.map((r) => r.seq)).toEqual(all.map((_, i) => i + 1))
          const perThread = new Map<string, Array<number>>()
          for (const r of rows) perThread.set(r.thread_id, [...(perThread.get(r.thread_id) ?? []), r.thread_seq])
          for (const seqs of perThread.values()) expect(seqs).toEqual(seqs.map((_, i) => i + 1))
          // No half-applied event: the projections are exactly what the log implies.
          expect((yield* (yield* ProjectionRebuild).rebuild({ dryRun: true })).differences).toEqual([])
          // And ingestion resumes where it stopped.
          const ingestion = yield* RuntimeIngestion
          const next = expected[rows.length]!
          const receipt = yield* ingestion.ingest(next)
          expect(receipt.duplicate).toBe(false)
        })
      )
    }
  })

  it("pending prompts and requests become server_restarted on the next start, once", async () => {
    const file = `${newDir()}/planbridge.db`
    const events = generateEventMix({ seed: 31, count: 3000, threads: 6 })
    await runWithIngestion(
      file,
      Effect.gen(function* () {
        yield* (yield* RuntimeIngestion).ingestAll(events)
      })
    )
    const run = () =>
      runWithIngestion(
        file,
        Effect.gen(function* () {
          const report = yield* recoverAfterRestart
          const { db, sqlite } = yield* Database
          // Read beside the store services: the projections may lag the log by a bounded tail.
          catchUpProjections(db)
          const pending = sqlite.prepare("select count(*) n from prompts where status = 'pending'").get() as {
            n: number
          }
          const open = sqlite.prepare("select count(*) n from threads where state != 'stopped'").get() as { n: number }
          const restarted = sqlite
            .prepare("select count(*) n from prompts where resolution = 'server_restarted'")
            .get() as { n: number }
          const exits = sqlite
            .prepare("select count(*) n from events where json_extract(event, '$.type') = 'session.exited'")
            .get() as { n: number }
          return { report, pending: pending.n, open: open.n, restarted: restarted.n, exits: exits.n }
        })
      )
    const first = await run()
    expect(first.report.prompts).toBeGreaterThan(0)
    expect(first.report.sessions).toBe(6)
    expect(first.pending).toBe(0)
    expect(first.open).toBe(0)
    expect(first.restarted).toBe(first.report.prompts)
    expect(first.exits).toBe(6)
    const second = await run()
    expect(second.report).toEqual({ prompts: 0, requests: 0, turns: 0, sessions: 0, processGroups: 0, homes: 0 })
    expect(second.exits).toBe(6)
    // Operators see why: the prompt's history ends with the restart.
    await runWithIngestion(
      file,
      Effect.gen(function* () {
        const queries = yield* OperatorQueries
        const resolved = yield* queries.listPrompts({ status: "resolved" })
        const victim = resolved.find((p) => p.resolution === "server_restarted")!
        const detail = yield* queries.getPrompt(victim.promptId)
        expect(detail.timeline.map((t) => t.event.type)).toEqual([
          "request.opened",
          "user-input.requested",
          "user-input.resolved",
          "request.resolved"
        ])
        expect(detail.timeline.at(-1)?.event.raw?.source).toBe("planbridge")
        expect(detail.raw).toBeNull()
      })
    )
  })

  it("a secret answer is absent from the database bytes, even when an adapter forgot to redact it", async () => {
    const dir = newDir()
    const file = `${dir}/planbridge.db`
    const secret = "hunter2-" + "x".repeat(8) + "-SECRET"
    const base = { provider: "codex", threadId: "thr-secret", turnId: "turn-1", createdAt: "2026-11-30T10:00:00.000Z" }
    const question = { options: [], multiSelect: false, allowFreeform: true, required: true }
    await runWithIngestion(
      file,
      Effect.gen(function* () {
        const ingestion = yield* RuntimeIngestion
        yield* ingestion.ingestAll([
          {
            ...base,
            eventId: "e1",
            type: "user-input.requested",
            payload: {
              prompt: {
                promptId: "p-secret",
                source: "native",
                blocking: true,
                questions: [
                  { id: "token", label: "API token", secret: true, ...question },
                  { id: "name", label: "Name", secret: false, ...question }
                ]
              }
            }
          },
          {
            ...base,
            eventId: "e2",
            type: "user-input.resolved",
            payload: {
              promptId: "p-secret",
              resolution: "answered",
              answers: [
                { questionId: "token", text: secret },
                { questionId: "name", text: "visible-name" }
              ]
            },
            raw: {
              source: "codex.app-server.response",
              payload: {
                id: 0,
                result: {
                  answers: {
                    token: { answers: [`user_note: ${secret}`] },
                    name: { answers: ["user_note: visible-name"] }
                  }
                }
              }
            }
          }
        ])
        const queries = yield* OperatorQueries
        const detail = yield* queries.getPrompt("p-secret")
        expect(detail.answers).toEqual([
          { questionId: "token", redacted: true },
          { questionId: "name", text: "visible-name" }
        ])
        expect(JSON.stringify(detail)).not.toContain(secret)
      })
    )
    // The database is closed (WAL checkpointed); read every file it left.
    const bytes = readdirSync(dir)
      .map((f) => readFileSync(`${dir}/${f}`).toString("latin1"))
      .join("")
    expect(bytes).toContain("visible-name")
    expect(bytes).not.toContain(secret)
  })
})

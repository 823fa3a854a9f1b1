import { Effect } from "effect"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { makeAcpTransport } from "../../../src/provider/acp/AcpTransport.ts"

/**
 * Closing an ACP session gives the agent's whole process group its grace period, not only the
 * agent. claude-agent-acp exits at once on SIGTERM while the Claude CLI it started is still
 * writing the session's transcript; killing the CLI as soon as the agent had exited left a
 * session that `session/load` could not find (resume.real.test.ts failed 2 runs in 6).
 * The stand-ins here make that timing deterministic.
 */
const dir = mkdtempSync(join(tmpdir(), "planbridge-acp-grace-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** An agent that exits on SIGTERM at once, with a child that needs `childMs` to finish after it. */
const standIn = (marker: string, childMs: number | "never") => {
  const child = `
    const { writeFileSync } = require("node:fs")
    process.on("SIGTERM", () => {
      ${childMs === "never" ? "" : `setTimeout(() => { writeFileSync(${JSON.stringify(marker)}, "flushed"); process.exit(0) }, ${childMs})`}
    })
    // Only once its handler is in place: a SIGTERM before that would end it at once.
    writeFileSync(${JSON.stringify(`${marker}.pid`)}, String(process.pid))
    setInterval(() => {}, 60000)`
  return `
    const { spawn } = require("node:child_process")
    spawn(process.execPath, ["-e", ${JSON.stringify(child)}], { stdio: "ignore" })
    process.on("SIGTERM", () => process.exit(0))
    process.stdin.resume()
    setInterval(() => {}, 60000)`
}

const runAndClose = (marker: string, childMs: number | "never") =>
  Effect.gen(function* () {
    yield* makeAcpTransport({
      command: process.execPath,
      args: ["-e", standIn(marker, childMs)],
      cwd: dir,
      env: { PATH: process.env.PATH ?? "" }
    })
    // The child has started, its SIGTERM handler installed, once it wrote its pid.
    while (!existsSync(`${marker}.pid`)) yield* Effect.sleep("10 millis")
    return Date.now()
  }).pipe(
    Effect.scoped,
    Effect.map((closingAt) => Date.now() - closingAt)
  )

const isRunning = (pid: number): boolean => {
  try {
    const state = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.[0]
    return state !== undefined && state !== "Z"
  } catch {
    return false
  }
}

describe("closing an ACP transport", { timeout: 20_000 }, () => {
  it("lets a child of the agent finish what it does on SIGTERM after the agent itself exited", async () => {
    const marker = join(dir, "flushes")
    const closeMs = await Effect.runPromise(runAndClose(marker, 400))
    expect(readFileSync(marker, "utf8")).toBe("flushed")
    expect(closeMs).toBeGreaterThanOrEqual(350)
    expect(closeMs).toBeLessThan(2_500)
  })

  it("still kills a child that ignores SIGTERM, once the grace period is over", async () => {
    const marker = join(dir, "stubborn")
    const closeMs = await Effect.runPromise(runAndClose(marker, "never"))
    const pid = Number(readFileSync(`${marker}.pid`, "utf8"))
    expect(closeMs).toBeGreaterThanOrEqual(2_900)
    expect(closeMs).toBeLessThan(6_000)
    // SIGKILL is delivered asynchronously: the process may take a moment to be gone.
    const deadline = Date.now() + 2_000
    while (isRunning(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
    expect(isRunning(pid)).toBe(false)
  })
})

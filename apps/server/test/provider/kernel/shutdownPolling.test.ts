import { Effect } from "effect"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it, vi } from "vitest"
import { ProcessGroups, unrecorded } from "../../../src/provider/ProcessGroups.ts"
import { acquireProviderProcess } from "../../../src/provider/kernel/ProviderProcess.ts"
import * as procfs from "../../../src/provider/kernel/procfs.ts"

// Every look at the group, counted: each one reads /proc/<pid>/stat of every process on the machine.
vi.mock("../../../src/provider/kernel/procfs.ts", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../../src/provider/kernel/procfs.ts")>()
  return { ...actual, groupHasLiveMembers: vi.fn(actual.groupHasLiveMembers) }
})

const dir = mkdtempSync(join(tmpdir(), "planbridge-shutdown-poll-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** A leader that exits on SIGTERM at once, with a child that takes `childMs` to finish after it. */
const standIn = (marker: string, childMs: number) => {
  const child = `
    const { writeFileSync } = require("node:fs")
    process.on("SIGTERM", () => setTimeout(() => process.exit(0), ${childMs}))
    writeFileSync(${JSON.stringify(marker)}, String(process.pid))
    setInterval(() => {}, 60000)`
  return `
    require("node:child_process").spawn(process.execPath, ["-e", ${JSON.stringify(child)}], { stdio: "ignore" })
    process.on("SIGTERM", () => process.exit(0))
    process.stdin.resume()`
}

describe("a provider process's shutdown", { timeout: 20_000 }, () => {
  it("waits out a lingering group without reading /proc fifty times a second", async () => {
    const marker = join(dir, "child.pid")
    const looks = vi.mocked(procfs.groupHasLiveMembers)
    const closeMs = await Effect.runPromise(
      Effect.gen(function* () {
        yield* acquireProviderProcess({
          command: process.execPath,
          args: ["-e", standIn(marker, 1_200)],
          cwd: dir,
          env: { PATH: process.env.PATH ?? "" },
          stderrLimit: 1000
        })
        while (!existsSync(marker)) yield* Effect.sleep("10 millis")
        looks.mockClear()
        return Date.now()
      }).pipe(
        Effect.scoped,
        Effect.map((closingAt) => Date.now() - closingAt),
        Effect.provideService(ProcessGroups, unrecorded)
      )
    )
    // The group's end is still waited for, and seen soon after it came...
    expect(closeMs).toBeGreaterThanOrEqual(1_150)
    expect(closeMs).toBeLessThan(2_000)
    // ...with pauses that grow: 20 ms polling looked about 60 times over these 1.2 s.
    expect(looks.mock.calls.length).toBeLessThan(20)
  })
})

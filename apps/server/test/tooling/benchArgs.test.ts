import { spawnSync } from "node:child_process"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

/**
 * `npm run bench -- <part>` with a part it does not know used to run nothing and print "every
 * figure meets its goal" with exit 0: a check that cannot fail. A misspelt part or flag is a usage
 * error (exit 2) that names it, before anything is measured.
 */
const root = fileURLToPath(new URL("../../../../", import.meta.url))
const bench = (...args: Array<string>) =>
  spawnSync(process.execPath, ["bin/run-ts.mjs", "bench/index.ts", ...args], {
    cwd: join(root, "apps/server"),
    encoding: "utf8",
    timeout: 60_000
  })

describe("npm run bench refuses what it does not know", () => {
  it("an unknown part is a usage error naming it and the known parts", () => {
    const run = bench("hot", "postgress")
    expect(run.status).toBe(2)
    expect(run.stderr).toContain("unknown part 'postgress'")
    expect(run.stderr).toContain("parts: ingest, latency, hot, resume, snapshot, startup, codex, postgres")
    expect(run.stdout).not.toContain("meets its goal")
  })

  it("an unknown flag or a bad --soak is a usage error", () => {
    expect(bench("--snapshot-2m").stderr).toContain("unknown flag '--snapshot-2m'")
    const soak = bench("--soak=ten")
    expect(soak.status).toBe(2)
    expect(soak.stderr).toContain("--soak takes a whole number of seconds")
  })
})

import { Effect } from "effect"
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { SessionHomes } from "../../src/orchestration/SessionHomes.ts"

/** The per-thread provider homes: private whatever the umask, and only ever ours to remove. */
const dirs: Array<string> = []
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))
const homesIn = (dataDir: string) =>
  Effect.runSync(
    Effect.provide(
      Effect.gen(function* () {
        return yield* SessionHomes
      }),
      SessionHomes.layer(dataDir)
    )
  )

describe("SessionHomes", () => {
  it("creates a thread's directory 0700 under <data dir>/homes, even with a permissive umask", () => {
    const dataDir = mkdtempSync(join(tmpdir(), "planbridge-homes-"))
    dirs.push(dataDir)
    const homes = homesIn(dataDir)
    const dir = homes.dirFor("thread-1")
    expect(dir).toBe(join(dataDir, "homes", "thread-1"))
    const previous = process.umask(0o000)
    try {
      Effect.runSync(homes.prepare(dir))
    } finally {
      process.umask(previous)
    }
    expect(statSync(dir).mode & 0o777).toBe(0o700)
    expect(statSync(join(dataDir, "homes")).mode & 0o777).toBe(0o700)
    expect(Effect.runSync(homes.list)).toEqual(["thread-1"])
  })

  it("owns only what is inside homes/: removing anything else does nothing", () => {
    const dataDir = mkdtempSync(join(tmpdir(), "planbridge-homes-"))
    dirs.push(dataDir)
    const homes = homesIn(dataDir)
    const outside = join(dataDir, "precious")
    mkdirSync(outside)
    writeFileSync(join(outside, "keep"), "x")
    for (const path of [
      outside,
      join(dataDir, "homes"),
      join(dataDir, "homes", ".."),
      join(dataDir, "homes", "..", "precious")
    ]) {
      expect(homes.owns(path)).toBe(false)
      Effect.runSync(homes.remove(path))
    }
    expect(existsSync(join(outside, "keep"))).toBe(true)
    const mine = homes.dirFor("thread-2")
    Effect.runSync(homes.prepare(mine))
    writeFileSync(join(mine, "config.toml"), "")
    expect(homes.owns(mine)).toBe(true)
    Effect.runSync(homes.remove(mine))
    expect(existsSync(mine)).toBe(false)
  })
})

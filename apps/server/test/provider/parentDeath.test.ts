import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { resolve } from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { GROUP_TOKEN_ENV, readProcStat } from "../../src/provider/ProcessGroups.ts"
import { AdapterError } from "../../src/provider/AdapterError.ts"
import { guardCommand } from "../../src/provider/kernel/ProviderProcess.ts"

/**
 * Issue 13, item 1, per transport: a provider process gets a parent-death SIGKILL (setpriv), so it
 * dies with whatever process started it, SIGKILLed or not, even if it ignores the end of its
 * stdin. The tools it started live on in its process group (that is what the watchdog and
 * start-up recovery are for, see test/ws/processGroups.test.ts) and carry the group's token.
 */
const root = fileURLToPath(new URL("../../../../", import.meta.url))
const strays = new Set<number>()
afterAll(() => {
  for (const pid of strays) {
    try {
      process.kill(pid, "SIGKILL")
    } catch {
      // Gone.
    }
  }
})

const alive = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.startsWith("Z") === false
  } catch {
    return false
  }
}
const gone = async (pid: number, ms = 3_000) => {
  const deadline = Date.now() + ms
  while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
  return !alive(pid)
}

describe("every provider transport ties its process to its parent's life", () => {
  for (const kind of ["acp", "codex", "claude"] as const) {
    it(`${kind}: SIGKILL of the host kills the provider; its tool lives on, in its group, with the token`, async () => {
      const entry = resolve(root, "apps/server/test/support/transportHost.ts")
      const host = spawn(process.execPath, [resolve(root, "apps/server/bin/run-ts.mjs"), entry, kind], {
        stdio: ["ignore", "pipe", "inherit"]
      })
      const line = await new Promise<string>((r) => createInterface({ input: host.stdout! }).once("line", r))
      const { provider, tool } = JSON.parse(line) as { provider: number; tool: number }
      strays.add(provider).add(tool)
      expect(readProcStat(provider)?.pgrp).toBe(provider)
      expect(readProcStat(tool)?.pgrp).toBe(provider)
      expect(readFileSync(`/proc/${tool}/environ`, "latin1")).toContain(`${GROUP_TOKEN_ENV}=`)

      host.kill("SIGKILL")
      expect(await gone(provider)).toBe(true)
      expect(alive(tool)).toBe(true)
    }, 10_000)
  }

  it("a program that is not there is reported as spawn ENOENT, not as setpriv's failure", () => {
    const env = { PATH: "/usr/bin:/bin" }
    const missing = guardCommand({ command: "no-such-provider-binary", args: [], env, cwd: "/" })
    expect(missing).toMatchObject({ _tag: "AdapterError", kind: "start_failed" })
    expect(missing instanceof AdapterError && missing.message).toBe("spawn no-such-provider-binary ENOENT")
    const found = guardCommand({ command: "sleep", args: ["1"], env, cwd: "/" })
    if (found instanceof AdapterError) throw found
    expect(found.args.slice(0, 3)).toEqual(["--pdeathsig", "KILL", "--"])
    expect(found.args.slice(4)).toEqual(["1"])
    expect(found.env[GROUP_TOKEN_ENV]).toBe(found.token)
  })
})

import { Effect, Exit } from "effect"
import { mkdirSync, readFileSync, writeFileSync, existsSync, truncateSync } from "node:fs"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { collectProviderState, writeProviderState } from "../../src/orchestration/ProviderStateFiles.ts"
import { PROVIDER_STATE_MAX_BYTES } from "../../src/persistence/ProviderStates.ts"
import { tempDir } from "../support/ingestionRuntime.ts"

/**
 * What is captured from a provider home (issue 32): only the files the provider resumes from,
 * a home past the bound refused before anything is read, and a restore that never writes
 * outside the home it is given.
 */
const cleanups: Array<() => void> = []
afterEach(() => cleanups.splice(0).forEach((cleanup) => cleanup()))
const home = () => {
  const t = tempDir("state-files")
  cleanups.push(t.cleanup)
  return t.dir
}
const put = (root: string, path: string, text: string) => {
  mkdirSync(join(root, path, ".."), { recursive: true })
  writeFileSync(join(root, path), text)
}

describe("provider state files", () => {
  it("Codex: the rollouts only; Claude: the session logs only; an ACP agent: nothing", async () => {
    const dir = home()
    put(dir, "sessions/2026/12/06/rollout-2026-12-06T21-00-00-abc.jsonl", "codex line\n")
    put(dir, "config.toml", 'model = "x"\n')
    put(dir, "auth.json", "{}")
    put(dir, ".claude/projects/-tmp-cwd/5f0c.jsonl", "claude line\n")
    put(dir, ".claude/projects/-tmp-cwd/5f0c/subagents/agent-1.jsonl", "sub\n")
    put(dir, ".claude/settings.json", "{}")
    const paths = async (provider: string) =>
      (await Effect.runPromise(collectProviderState("thr", provider, dir))).map((f) => f.path)
    expect(await paths("codex")).toEqual(["sessions/2026/12/06/rollout-2026-12-06T21-00-00-abc.jsonl"])
    expect(await paths("claude")).toEqual([
      ".claude/projects/-tmp-cwd/5f0c.jsonl",
      ".claude/projects/-tmp-cwd/5f0c/subagents/agent-1.jsonl"
    ])
    expect(await paths("acp-claude")).toEqual([])
  })

  it("a home past the bound is refused too_large, from the sizes alone", async () => {
    const dir = home()
    put(dir, "sessions/rollout-big.jsonl", "")
    // Sparse: the size is past the bound without writing it.
    truncateSync(join(dir, "sessions/rollout-big.jsonl"), PROVIDER_STATE_MAX_BYTES + 1)
    const exit = await Effect.runPromiseExit(collectProviderState("thr-big", "codex", dir))
    expect(Exit.isFailure(exit) && JSON.stringify(exit.cause)).toContain("StoreTooLarge")
  })

  it("a restore writes inside the home only", async () => {
    const dir = home()
    const target = join(dir, "homes", "thr")
    await Effect.runPromise(
      writeProviderState(target, [{ path: "sessions/rollout-a.jsonl", content: Buffer.from("line\n") }])
    )
    expect(readFileSync(join(target, "sessions/rollout-a.jsonl"), "utf8")).toBe("line\n")
    const escaped = await Effect.runPromiseExit(
      writeProviderState(target, [{ path: "../escaped.jsonl", content: Buffer.from("x") }])
    )
    expect(Exit.isFailure(escaped)).toBe(true)
    expect(existsSync(join(dir, "homes", "escaped.jsonl"))).toBe(false)
  })
})

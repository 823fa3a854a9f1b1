import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import {
  groupHasLiveMembers,
  ProcessGroups,
  unrecorded,
  type ProcessGroupsService
} from "../../src/provider/ProcessGroups.ts"
import { probeClaudeAuth } from "../../src/provider/claude/ClaudeAuthProbe.ts"
import { claudeOauthLogin, tempDirs, writeFiles } from "../support/fixtureHomes.ts"
import { assertLoopbackOnly } from "../support/loopbackOnly.ts"

/**
 * The Claude login probe runs the real Agent SDK and CLI in a child Node process (the server
 * never loads the SDK for it): what it reports, and that nothing of it is left running after.
 */
const dirs = tempDirs()
afterAll(() => dirs.removeAll())

/** Runs the probe with a ProcessGroups that remembers the groups it was asked to track. */
const probe = async (input: Parameters<typeof probeClaudeAuth>[0]) => {
  const groups: Array<number> = []
  const recording: ProcessGroupsService = {
    ...unrecorded,
    track: (group) => Effect.sync(() => groups.push(group.pid)).pipe(Effect.andThen(unrecorded.track(group)))
  }
  const auth = await Effect.runPromise(probeClaudeAuth(input).pipe(Effect.provideService(ProcessGroups, recording)))
  return { auth, groups }
}

const userEnv = (extra: Record<string, string>) => ({
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: dirs.make("claude-probe-home"),
  // Nothing may reach a model: the CLI only initializes.
  ANTHROPIC_BASE_URL: "http://127.0.0.1:9",
  ...extra
})

describe("the Claude login probe in its own process", () => {
  it("a .credentials.json login is reported oauth with its subscription; the probe's group is gone after", async () => {
    assertLoopbackOnly()
    const configDir = dirs.make("claude-probe-config")
    writeFiles(configDir, claudeOauthLogin())
    const { auth, groups } = await probe({ env: userEnv({ CLAUDE_CONFIG_DIR: configDir }) })
    expect(auth).toEqual({ status: "authenticated", method: "oauth", label: "Claude Max" })
    expect(groups).toHaveLength(1)
    expect(groupHasLiveMembers(groups[0] ?? 0)).toBe(false)
  }, 60_000)

  it("no login: unauthenticated with the login hint", async () => {
    const { auth } = await probe({ env: userEnv({}) })
    expect(auth).toMatchObject({ status: "unauthenticated" })
    expect(auth.hint).toContain("claude /login")
  }, 60_000)

  it("a CLI that cannot start: unknown, saying why, and nothing left running", async () => {
    const { auth, groups } = await probe({
      env: userEnv({ CLAUDE_CODE_OAUTH_TOKEN: "sk-ant-oat01-unused" }),
      pathToClaudeCodeExecutable: "/nonexistent/claude-cli.js"
    })
    expect(auth.status).toBe("unknown")
    expect(auth.hint).toMatch(/^Claude Code did not say: .+/)
    expect(groups).toHaveLength(1)
    expect(groupHasLiveMembers(groups[0] ?? 0)).toBe(false)
  }, 60_000)
})

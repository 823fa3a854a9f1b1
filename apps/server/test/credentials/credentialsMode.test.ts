import { describe, expect, it } from "vitest"
import { providerOffers } from "../../src/cli/providerOffers.ts"
import { claudeUserEnv } from "../../src/provider/claude/ClaudeUserEnv.ts"
import { codexUserArgs } from "../../src/provider/codex/CodexLaunch.ts"
import { chooseCredentialsMode } from "../../src/provider/credentials/CredentialsMode.ts"
import { subscriptionOverrides, userEnvironment } from "../../src/provider/credentials/UserEnvironment.ts"

describe("the credentials mode", () => {
  it("flag, then PLANBRIDGE_CREDENTIALS, then a base URL (isolated), then the host (user on loopback)", () => {
    const mode = (flag: string | undefined, env: Record<string, string>, loopback = true) =>
      chooseCredentialsMode({ flag, env, loopback })
    expect(mode(undefined, {})).toEqual({ mode: "user", why: "the default on loopback" })
    expect(mode(undefined, {}, false)).toEqual({ mode: "isolated", why: "the default off loopback" })
    expect(mode(undefined, { PLANBRIDGE_CLAUDE_BASE_URL: "http://x" })).toEqual({
      mode: "isolated",
      why: "PLANBRIDGE_CLAUDE_BASE_URL is set"
    })
    expect(mode(undefined, { PLANBRIDGE_CODEX_BASE_URL: "" }).mode).toBe("user")
    expect(mode(undefined, { PLANBRIDGE_CREDENTIALS: "user", PLANBRIDGE_CODEX_BASE_URL: "http://x" }).mode).toBe("user")
    expect(mode("isolated", { PLANBRIDGE_CREDENTIALS: "user" })).toEqual({ mode: "isolated", why: "--credentials" })
    const refused = (() => {
      try {
        return mode(undefined, { PLANBRIDGE_CREDENTIALS: "mine" })
      } catch (error) {
        return error
      }
    })()
    expect(refused).toMatchObject({
      _tag: "AdapterError",
      kind: "invalid_config",
      message: "PLANBRIDGE_CREDENTIALS must be 'user' or 'isolated', not 'mine'"
    })
  })

  it("user mode strips a parent Claude Code session's variables and names a key that overrides a login", () => {
    const env = {
      PATH: "/bin",
      HOME: "/home/u",
      CLAUDECODE: "1",
      CLAUDE_CODE_ENTRYPOINT: "cli",
      CLAUDE_CODE_SSE_PORT: "9"
    }
    expect(userEnvironment(env)).toEqual({ PATH: "/bin", HOME: "/home/u" })
    const claude = claudeUserEnv({ userEnv: userEnvironment({ ...env, CLAUDE_CONFIG_DIR: "/cfg" }) })
    expect([claude.HOME, claude.CLAUDE_CONFIG_DIR, claude.CLAUDECODE, claude.ANTHROPIC_API_KEY]).toEqual([
      "/home/u",
      "/cfg",
      undefined,
      undefined
    ])
    expect(subscriptionOverrides({ ANTHROPIC_API_KEY: "sk-secret" })).toEqual([
      "ANTHROPIC_API_KEY is set: Claude uses it instead of a claude.ai login (unset it to use the login)"
    ])
    expect(subscriptionOverrides({ ANTHROPIC_API_KEY: "" })).toEqual([])
  })

  it("Codex's needs are -c overrides, never a file in the user's CODEX_HOME", () => {
    expect(codexUserArgs(undefined)).toEqual([
      "-c",
      "features.default_mode_request_user_input=true",
      "-c",
      "tools.update_plan.enabled=true",
      "-c",
      "suppress_unstable_features_warning=true"
    ])
    expect(codexUserArgs("gpt-5.5").slice(-2)).toEqual(["-c", 'model="gpt-5.5"'])
  })

  it("user mode offers the installed programs with the user's own login, whatever keys are set", () => {
    const offers = providerOffers({ CODEX_HOME: "/c" }, "user", { codex: true, claude: false })
    expect(offers.map((o) => [o.provider, o.offered, o.why])).toEqual([
      ["codex", true, "your own Codex login and config (/c)"],
      ["claude", false, "@anthropic-ai/claude-agent-sdk is not installed"],
      ["cursor", false, "neither CURSOR_API_KEY nor CURSOR_AUTH_TOKEN is set"]
    ])
  })
})

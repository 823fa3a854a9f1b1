/**
 * The environment a provider inherits in `user` credentials mode: the user's own, minus what a
 * parent Claude Code session leaves behind. A Planbridge server started from inside Claude Code
 * inherits these, and a Claude CLI that sees them believes it is a nested tool call of that
 * session (it talks to the parent's IDE port, changes its entrypoint and its telemetry).
 */
export const PARENT_SESSION_VARIABLES = [
  "CLAUDECODE",
  "CLAUDE_CODE_ENTRYPOINT",
  "CLAUDE_CODE_SSE_PORT",
  "CLAUDE_CODE_SESSION_ID",
  "CLAUDE_AGENT_SDK_VERSION",
  "CLAUDE_CODE_IDE_HOST_OVERRIDE"
] as const

type Env = Readonly<Record<string, string | undefined>>

/** The user's environment as a provider gets it: defined values only, parent-session variables gone. */
export const userEnvironment = (env: Env): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && !(PARENT_SESSION_VARIABLES as ReadonlyArray<string>).includes(name)) out[name] = value
  }
  return out
}

/**
 * Variables that silently take precedence over a subscription login in user mode. Named (never
 * their values) in a start-up warning: a user who pays for a subscription should not find an API
 * bill because an old key lingers in their shell profile.
 */
export const subscriptionOverrides = (env: Env): ReadonlyArray<string> => {
  const set = (name: string) => (env[name] ?? "") !== ""
  const lines: Array<string> = []
  for (const name of ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"]) {
    if (set(name)) lines.push(`${name} is set: Claude uses it instead of a claude.ai login (unset it to use the login)`)
  }
  return lines
}

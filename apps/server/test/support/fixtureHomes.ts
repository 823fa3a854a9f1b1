import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import type { RegisteredProvider } from "../../src/orchestration/ProviderRegistry.ts"

/**
 * Users' homes for credentials tests, made by the test in a temp dir from the file contents
 * below (never a copy of anyone's real login): a Claude config dir with an OAuth login, a Codex
 * home with an API-key or a ChatGPT login. Tokens are fake and only ever reach the loopback mock.
 */

export const FAKE_CLAUDE_TOKEN = "sk-ant-oat01-planbridge-fixture"
export const FAKE_OPENAI_KEY = "sk-planbridge-fixture-key"

/** A fresh temp dir (removed by `removeAll`). */
export const tempDirs = () => {
  const dirs: Array<string> = []
  return {
    make: (label: string) => {
      const dir = mkdtempSync(join(tmpdir(), `planbridge-${label}-`))
      dirs.push(dir)
      return dir
    },
    removeAll: () => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true }))
  }
}

export const writeFiles = (root: string, files: Readonly<Record<string, string>>): void => {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), text)
  }
}

/** `$CLAUDE_CONFIG_DIR/.credentials.json` as `claude /login` writes it (CLI 2.1.333). */
export const claudeOauthLogin = (): Record<string, string> => ({
  ".credentials.json": JSON.stringify({
    claudeAiOauth: {
      accessToken: FAKE_CLAUDE_TOKEN,
      refreshToken: "sk-ant-ort01-planbridge-fixture",
      expiresAt: 4102444800000,
      scopes: ["user:inference", "user:profile"],
      subscriptionType: "max"
    }
  })
})

/**
 * A Codex user's `config.toml`: an MCP server, a trusted project and, when `mockBaseUrl` is given,
 * their own model provider (the loopback mock); without it, OpenAI's (unreachable here).
 */
export const codexUserConfig = (mockBaseUrl: string | undefined, trustedProject: string): string =>
  [
    `model = "gpt-5.5"`,
    ...(mockBaseUrl === undefined ? [] : modelProvider(mockBaseUrl)),
    ``,
    `[mcp_servers.fixture-docs]`,
    `command = "/bin/false"`,
    `enabled = false`,
    ``,
    `[projects."${trustedProject}"]`,
    `trust_level = "trusted"`,
    ``
  ].join("\n")

/** A trusted project's own `.codex/config.toml`: one more MCP server, in the `project` layer. */
export const codexProjectConfig = (): Record<string, string> => ({
  ".codex/config.toml": [`[mcp_servers.project-tool]`, `command = "/bin/false"`, `enabled = false`, ``].join("\n")
})

const modelProvider = (mockBaseUrl: string): ReadonlyArray<string> => [
  `model_provider = "mock"`,
  ``,
  `[model_providers.mock]`,
  `name = "mock"`,
  `base_url = "${mockBaseUrl}"`,
  `wire_api = "responses"`,
  // The provider takes the login's key (auth.json) as its bearer token.
  `requires_openai_auth = true`,
  `request_max_retries = 0`,
  `stream_max_retries = 0`
]

/** `auth.json` after `codex login --with-api-key`. */
export const codexApiKeyLogin = (): string =>
  JSON.stringify({ OPENAI_API_KEY: FAKE_OPENAI_KEY, tokens: null, last_refresh: null })

/** `auth.json` after a ChatGPT login (unsigned fake tokens: nothing can verify them offline). */
export const codexChatgptLogin = (): string => {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url")
  const claims = {
    email: "fixture@example.com",
    exp: 4102444800,
    "https://api.openai.com/auth": { chatgpt_plan_type: "plus", chatgpt_account_id: "acct-fixture" }
  }
  const jwt = `${part({ alg: "none", typ: "JWT" })}.${part(claims)}.c2ln`
  const tokens = { id_token: jwt, access_token: jwt, refresh_token: "rt-fixture", account_id: "acct-fixture" }
  return JSON.stringify({ OPENAI_API_KEY: null, tokens, last_refresh: new Date(0).toISOString() })
}

/** Every file under `root` with its bytes, to compare before and after a session. */
export const filesUnder = (root: string): Map<string, Buffer> => {
  const out = new Map<string, Buffer>()
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (entry.isFile()) out.set(path.slice(root.length + 1), readFileSync(path))
    }
  }
  walk(root)
  return out
}

/** The files of `before` whose bytes differ now, or that are gone. */
export const changedFiles = (root: string, before: ReadonlyMap<string, Buffer>): ReadonlyArray<string> =>
  [...before].flatMap(([path, bytes]) => {
    try {
      return readFileSync(join(root, path)).equals(bytes) ? [] : [path]
    } catch {
      return [path]
    }
  })

export const accessTime = (path: string): number => statSync(path).atimeMs

export const only = (providers: ReadonlyArray<RegisteredProvider>, kind: string): ReadonlyArray<RegisteredProvider> =>
  providers.filter((p) => p.adapter.provider === kind)

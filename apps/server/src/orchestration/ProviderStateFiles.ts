import { Effect } from "effect"
import { lstatSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { dirname, join, relative, resolve, sep } from "node:path"
import { PROVIDER_STATE_MAX_BYTES, tooLarge, type ProviderStateFile } from "../persistence/ProviderStates.ts"
import type { StoreError } from "../persistence/StoreError.ts"

/**
 * Which files of an isolated provider home its provider reads back on resume, by provider: the
 * directories (relative to the home) they are found under and the file names kept.
 * - Codex (app-server 0.171.0, `thread/resume`): the thread's rollout,
 *   `CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl`, which it finds by the
 *   thread id in the file name and replays into the conversation. Nothing else is needed: its
 *   state database (`state_*.sqlite`) is rebuilt from the rollouts, `config.toml` is written at
 *   every start (CodexHome.ts), and `auth.json` is never used (the key comes from the environment).
 * - Claude (Agent SDK 0.3.333, `resume`): the session log,
 *   `HOME/.claude/projects/<the cwd, sanitised>/<session id>.jsonl` (and its sub-agents' logs
 *   under `<session id>/`), which the CLI replays. Its settings are ours and rewritten at start.
 * Other providers (ACP agents) keep theirs in their own layouts: nothing is captured for them.
 */
const RESUME_FILES: Readonly<Record<string, { readonly under: string; readonly keep: RegExp }>> = {
  codex: { under: "sessions", keep: /^rollout-.*\.jsonl$/u },
  claude: { under: ".claude/projects", keep: /\.jsonl$/u }
}

/** True when the provider has files worth capturing. */
export const capturesState = (provider: string): boolean => RESUME_FILES[provider] !== undefined

/** The resume files under `home` (regular files only, never a link), as paths relative to it with their sizes. */
const listFiles = (home: string, provider: string): Array<{ readonly path: string; readonly size: number }> => {
  const rule = RESUME_FILES[provider]
  if (rule === undefined) return []
  const found: Array<{ path: string; size: number }> = []
  const walk = (dir: string) => {
    let entries
    try {
      entries = readdirSync(dir, { withFileTypes: true })
    } catch {
      return // Not there (yet): nothing to keep.
    }
    for (const entry of entries) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (entry.isFile() && rule.keep.test(entry.name))
        found.push({ path: relative(home, path).split(sep).join("/"), size: lstatSync(path).size })
    }
  }
  walk(join(home, rule.under))
  return found.sort((a, b) => a.path.localeCompare(b.path))
}

/**
 * Reads what `provider` needs from `home` to resume `threadId`. The sizes are added up before
 * anything is read, so a home past PROVIDER_STATE_MAX_BYTES is refused without loading it.
 */
export const collectProviderState = (
  threadId: string,
  provider: string,
  home: string
): Effect.Effect<ReadonlyArray<ProviderStateFile>, StoreError> =>
  Effect.gen(function* () {
    const files = listFiles(home, provider)
    const bytes = files.reduce((total, file) => total + file.size, 0)
    if (bytes > PROVIDER_STATE_MAX_BYTES) return yield* Effect.fail(tooLarge(threadId, bytes))
    return files.flatMap((file) => {
      try {
        return [{ path: file.path, content: readFileSync(join(home, file.path)) }]
      } catch {
        return [] // Removed since it was listed (a session that ended): not part of its state.
      }
    })
  })

/**
 * Writes captured files into `home` (a directory of ours), private like the rest of the data
 * dir. Each path is resolved and must stay inside `home` (the store's schema refuses any other,
 * this checks again where it matters).
 */
export const writeProviderState = (home: string, files: ReadonlyArray<ProviderStateFile>) =>
  Effect.try({
    try: () => {
      const root = resolve(home)
      for (const file of files) {
        const target = resolve(root, file.path)
        if (!target.startsWith(root + sep)) throw new Error(`a stored path leaves the provider home: ${file.path}`)
        mkdirSync(dirname(target), { recursive: true, mode: 0o700 })
        writeFileSync(target, file.content, { mode: 0o600 })
      }
    },
    catch: (cause) => (cause instanceof Error ? cause : new Error(String(cause)))
  })

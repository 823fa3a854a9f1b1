import type { ServerFrame } from "@planbridge/contracts"
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { expect } from "vitest"
import {
  alive,
  killServe,
  processesCarrying,
  recordedGroupTokens,
  startServe,
  until,
  type ServeProcess
} from "../chaos/rig.ts"
import { connect, isEvent, type TestClient } from "./wsClient.ts"

/**
 * What the resume tests share: `planbridge serve` as a child process (so it can be SIGKILLed)
 * on one data dir, restarted on it, with one provider configured from the environment the way
 * users configure it, and `TMPDIR` pointed at a directory of the test's own, so that anything a
 * session leaves in the temporary directory shows.
 */

export type EventFrame = ServerFrame & { type: "event" }

/** The caller's environment without any provider credential, plus `extra`. */
export const serveEnv = (extra: Readonly<Record<string, string>>): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (value === undefined) continue
    // The server's own settings come from `extra`; PLANBRIDGE_FROM_SOURCE stays (tests run the sources).
    if (
      /^(OPENAI_API_KEY|ANTHROPIC_API_KEY|CURSOR_API_KEY|CURSOR_AUTH_TOKEN|PLANBRIDGE_(?!FROM_SOURCE$).*)$/.test(name)
    )
      continue
    env[name] = value
  }
  return { ...env, ...extra }
}

export const serve = (dataDir: string, env: Readonly<Record<string, string>>): Promise<ServeProcess> =>
  startServe({ dataDir, env, startTimeoutMs: 60_000 })

export const sigkill = killServe

export const resultOf = (frame: ServerFrame & { type: "result" | "error" }): Record<string, unknown> => {
  if (frame.type === "error") throw new Error(`command failed: ${frame.error.code}: ${frame.error.message}`)
  return frame.result as Record<string, unknown>
}

export const errorOf = (frame: ServerFrame & { type: "result" | "error" }) => {
  if (frame.type !== "error") throw new Error(`expected an error, got ${JSON.stringify(frame.result)}`)
  return frame.error
}

export const client = (server: ServeProcess): Promise<TestClient> => connect({ url: server.url, token: server.token })

/** Every event of the thread from its first, as a new subscriber with `afterSeq: 0` receives them. */
export const allEvents = async (
  server: ServeProcess,
  threadId: string,
  atLeast: number
): Promise<Array<EventFrame>> => {
  const reader = await client(server)
  try {
    resultOf(await reader.command({ type: "thread.subscribe", threadId: threadId as never, afterSeq: 0 }))
    await reader.waitFor((f): f is EventFrame => f.type === "event" && f.threadId === threadId && f.seq >= atLeast)
    return reader.frames.filter((f): f is EventFrame => f.type === "event" && f.threadId === threadId)
  } finally {
    await reader.close()
  }
}

/** The sequence numbers are exactly 1…n, each once. */
export const expectGapFree = (events: ReadonlyArray<EventFrame>): void => {
  expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1))
}

export const waitEvent = (c: TestClient, type: string, threadId: string, after = 0, timeoutMs = 60_000) =>
  c.waitFor((f): f is EventFrame => isEvent(type, threadId)(f) && f.seq > after, timeoutMs)

/** Live processes of the provider groups the data dir's current records name. */
export const providerProcesses = (dataDir: string): ReadonlyArray<number> =>
  processesCarrying(new Set(recordedGroupTokens(dataDir)))

/** SIGKILLs every process of the recorded provider groups (a provider crash), and waits until they are gone. */
export const crashProviders = async (dataDir: string): Promise<number> => {
  const pids = providerProcesses(dataDir)
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL")
    } catch {
      // Gone already.
    }
  }
  await until(() => pids.every((pid) => !alive(pid)), 10_000)
  return pids.length
}

/** Entries of `dir` whose name starts with `planbridge-` (per-session homes made in a temp dir). */
export const planbridgeEntries = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir).filter((name) => name.startsWith("planbridge-"))

export const modeOf = (path: string): number => statSync(path).mode & 0o777

export const homesOf = (dataDir: string): ReadonlyArray<string> => {
  try {
    return readdirSync(join(dataDir, "homes")).sort()
  } catch {
    return []
  }
}

/** Files under `dir` (recursively) whose bytes contain `secret`, as paths relative to `dir`. */
export const filesContaining = (dir: string, secret: string): ReadonlyArray<string> => {
  const found: Array<string> = []
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (entry.isFile() && readFileSync(path).includes(secret)) found.push(path.slice(dir.length + 1))
    }
  }
  walk(dir)
  return found
}

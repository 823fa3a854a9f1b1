import * as acp from "@agentclientprotocol/sdk/unstable"
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process"
import { Readable, Writable } from "node:stream"
import { fileURLToPath } from "node:url"

const bin = fileURLToPath(new URL("../../bin/planbridge.mjs", import.meta.url))

/** Something the agent asked the editor, waiting for the test's reply (or cancelled by the agent). */
export interface Asked<P, R> {
  readonly params: P
  /** Aborted when the agent sent `$/cancel_request` for it. */
  readonly signal: AbortSignal
  readonly reply: (response: R) => void
}
export type Elicitation = Asked<acp.CreateElicitationRequest, acp.CreateElicitationResponse>
export type Permission = Asked<acp.RequestPermissionRequest, acp.RequestPermissionResponse>

/**
 * An editor as the tests play it: `planbridge acp` as a child process on stdio, driven with the
 * SDK's client side (`client()`, which replaced `ClientSideConnection` in SDK 2.x). It records
 * every `session/update` and queues every elicitation and permission request for the test.
 */
export interface Editor {
  readonly child: ChildProcessWithoutNullStreams
  readonly agent: acp.ClientContext
  readonly updates: Array<acp.SessionNotification>
  readonly elicitations: Array<Elicitation>
  readonly permissions: Array<Permission>
  /** Resolves once `check` holds (checked after every message from the agent). */
  readonly until: <T>(check: () => T | undefined, what: string, timeoutMs?: number) => Promise<T>
  readonly initialize: (capabilities?: acp.ClientCapabilities) => Promise<acp.InitializeResponse>
  /** Writes raw bytes to the agent's stdin (bad-input tests). */
  readonly writeRaw: (text: string) => void
  readonly stderr: () => string
  /** Everything the agent wrote on stdout, as text. */
  readonly stdout: () => string
  readonly close: () => Promise<number | null>
}

export const EDITOR_CAPABILITIES: acp.ClientCapabilities = {
  fs: { readTextFile: false, writeTextFile: false },
  terminal: false,
  elicitation: { form: {} },
  plan: {}
}

export const startEditor = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv): Editor => {
  const child = spawn(process.execPath, [bin, "acp", ...args], {
    env: { ...env, PLANBRIDGE_FROM_SOURCE: "1" },
    stdio: ["pipe", "pipe", "pipe"]
  })
  let stderr = ""
  child.stderr.on("data", (chunk: Buffer) => void (stderr += String(chunk)))
  let stdout = ""
  child.stdout.on("data", (chunk: Buffer) => void (stdout += String(chunk)))
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  const updates: Array<acp.SessionNotification> = []
  const elicitations: Array<Elicitation> = []
  const permissions: Array<Permission> = []
  const checks = new Set<() => void>()
  const changed = () => {
    for (const check of [...checks]) check()
  }
  const asked = <P, R>(list: Array<Asked<P, R>>, params: P, signal: AbortSignal, cancelled: R): Promise<R> =>
    new Promise<R>((resolve) => {
      list.push({ params, signal, reply: resolve })
      signal.addEventListener("abort", () => {
        resolve(cancelled)
        changed()
      })
      changed()
    })
  const app = acp
    .client({ name: "test-editor" })
    .onNotification("session/update", ({ params }) => {
      updates.push(params)
      changed()
    })
    .onRequest("elicitation/create", ({ params, signal }) => asked(elicitations, params, signal, { action: "cancel" }))
    .onRequest("session/request_permission", ({ params, signal }) =>
      asked(permissions, params, signal, { outcome: { outcome: "cancelled" } })
    )
  const connection = app.connect(
    acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>)
  )
  const until = <T>(check: () => T | undefined, what: string, timeoutMs = 120_000): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const run = () => {
        const value = check()
        if (value === undefined) return
        checks.delete(run)
        clearTimeout(timer)
        resolve(value)
      }
      const timer = setTimeout(() => {
        checks.delete(run)
        reject(new Error(`timed out waiting for ${what}; stderr: ${stderr}`))
      }, timeoutMs)
      checks.add(run)
      run()
    })
  return {
    child,
    agent: connection.agent,
    updates,
    elicitations,
    permissions,
    until,
    initialize: (clientCapabilities = EDITOR_CAPABILITIES) =>
      connection.agent.request("initialize", { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities }),
    writeRaw: (text) => void child.stdin.write(text),
    stderr: () => stderr,
    stdout: () => stdout,
    close: async () => {
      connection.close()
      child.stdin.end()
      const timer = setTimeout(() => child.kill("SIGKILL"), 30_000)
      const code = await exited
      clearTimeout(timer)
      return code
    }
  }
}

type UpdateOf<K extends acp.SessionUpdate["sessionUpdate"]> = Extract<acp.SessionUpdate, { sessionUpdate: K }>

/** The updates of one session, of one kind. */
export const updatesOf = <K extends acp.SessionUpdate["sessionUpdate"]>(
  editor: Editor,
  sessionId: string,
  kind: K
): Array<UpdateOf<K>> => {
  const isKind = (update: acp.SessionUpdate): update is UpdateOf<K> => update.sessionUpdate === kind
  return editor.updates.flatMap((n) => (n.sessionId === sessionId && isKind(n.update) ? [n.update] : []))
}

import * as acp from "@agentclientprotocol/sdk/unstable"
import type { PlanbridgeClient } from "@planbridge/client"
import { ThreadId } from "@planbridge/contracts"
import { Schema } from "effect"
import { asAcp, unknownSession } from "./AcpErrors.ts"
import { AgentSession } from "./AgentSession.ts"
import type { EditorCapabilities } from "./EditorAsks.ts"
import { historyUpdates } from "./HistoryUpdates.ts"
import { promptText } from "./PromptText.ts"
import { chooseProvider, initializeResponse } from "./ProviderChoice.ts"
import { MODE_CONFIG_ID, operatingModeOf } from "./SessionModes.ts"

/** How many of a thread's latest turns `session/load` replays (the server's largest window). */
export const LOADED_TURNS = 200

export interface AgentOptions {
  readonly client: PlanbridgeClient
  /** `--provider`: the provider of every new session; absent, the first ready one. */
  readonly provider: string | undefined
  readonly version: string
}

const decodeThreadId = Schema.decodeUnknownOption(ThreadId)

/** A session id is a thread id: one that cannot be (empty, over 512 characters) is invalid params. */
const threadIdOf = (sessionId: string): ThreadId => {
  const decoded = decodeThreadId(sessionId)
  if (decoded._tag === "None")
    throw acp.RequestError.invalidParams(
      { path: ["sessionId"] },
      "a session id is a Planbridge thread id (1–512 characters)"
    )
  return decoded.value
}

/**
 * Planbridge as an ACP agent: each ACP session is a Planbridge thread (its id is the thread id),
 * driven through the server's client protocol, so that what the editor starts the web UI and the
 * CLI see too, and what they answer the editor sees resolved.
 */
export const planbridgeAgent = (options: AgentOptions): acp.AgentApp => {
  const { client } = options
  const sessions = new Map<string, AgentSession>()
  let editor: acp.AgentContext | undefined
  let editorCapabilities: EditorCapabilities = { elicitationForm: false, planUpdates: false }
  client.onEvent((threadId, event) => sessions.get(threadId)?.onEvent(event))

  const editorContext = (): acp.AgentContext => {
    if (editor === undefined) throw new acp.RequestError(-32603, "no connection to the editor")
    return editor
  }
  const session = (sessionId: string): AgentSession => {
    const found = sessions.get(sessionId)
    if (found === undefined) throw unknownSession(sessionId)
    return found
  }
  /**
   * Follows the thread and opens its session. The snapshot is read and the session registered
   * in one synchronous step after `follow` resolves: every later event reaches the session, and
   * every earlier one is in the snapshot.
   */
  const open = async (sessionId: string, replay: boolean): Promise<AgentSession> => {
    const threadId = threadIdOf(sessionId)
    sessions.get(threadId)?.close()
    const store = await client.follow(threadId, { window: LOADED_TURNS })
    const snapshot = store.getSnapshot()
    if (snapshot === undefined) throw new acp.RequestError(-32603, `thread '${threadId}' sent no snapshot`)
    const opened = new AgentSession(threadId, snapshot, client, editorContext(), editorCapabilities)
    if (replay) for (const update of historyUpdates(snapshot, editorCapabilities.planUpdates)) opened.update(update)
    sessions.set(threadId, opened)
    await opened.flushed()
    // What the thread waits on is asked once the editor has the session: after this reply, which
    // the SDK writes when the handler's promise settles (microtasks; setImmediate comes after them).
    setImmediate(() => opened.askPending(snapshot))
    return opened
  }

  return acp
    .agent({ name: "planbridge" })
    .onConnect((connection) => {
      editor = connection.client
      const closeAll = () => {
        for (const s of sessions.values()) s.close()
      }
      void connection.closed.then(closeAll, closeAll)
    })
    .onRequest("initialize", ({ params }) => {
      editorCapabilities = {
        elicitationForm: params.clientCapabilities?.elicitation?.form != null,
        planUpdates: params.clientCapabilities?.plan != null
      }
      return initializeResponse(client.providers, options.version)
    })
    .onRequest("authenticate", ({ params }) => {
      const provider = client.providers.find((p) => p.provider === params.methodId)
      throw new acp.RequestError(
        -32000,
        `Planbridge cannot log in for you: ${provider?.auth?.hint ?? "log the provider in on the machine the server runs on"}, then retry`,
        { planbridge: { code: "auth_required" } }
      )
    })
    .onRequest("session/new", ({ params }) =>
      asAcp(async () => {
        const provider = chooseProvider(client.providers, options.provider)
        const { threadId } = await client.startSession(provider, params.cwd, "default")
        const opened = await open(threadId, false)
        return { sessionId: threadId, modes: opened.modes, configOptions: opened.configOptions }
      })
    )
    .onRequest("session/load", ({ params }) =>
      asAcp(async () => {
        const opened = await open(params.sessionId, true)
        return { modes: opened.modes, configOptions: opened.configOptions }
      })
    )
    .onRequest("session/resume", ({ params }) =>
      asAcp(async () => {
        const threadId = threadIdOf(params.sessionId)
        const summary = (await client.listThreads()).find((t) => t.threadId === threadId)
        // Not live: a new provider session continuing the provider's own conversation. No replay.
        if (summary !== undefined && !summary.live) await client.resumeThread(threadId)
        const opened = await open(threadId, false)
        return { modes: opened.modes, configOptions: opened.configOptions }
      })
    )
    .onRequest("session/list", ({ params }) =>
      asAcp(async () => {
        const threads = await client.listThreads()
        const sessions = threads
          .filter((t) => params.cwd == null || t.cwd === params.cwd)
          .map((t) => ({
            sessionId: t.threadId,
            cwd: t.cwd ?? "",
            title: `${t.provider} (${t.state}${t.live ? "" : ", not live"})`,
            updatedAt: t.updatedAt
          }))
        return { sessions }
      })
    )
    .onRequest("session/prompt", ({ params }) =>
      asAcp(async () => {
        const text = promptText(params.prompt)
        return await session(params.sessionId).prompt(text)
      })
    )
    .onNotification("session/cancel", ({ params }) => {
      if (!sessions.has(params.sessionId)) return
      // A failed interrupt (the session ended meanwhile) leaves nothing to cancel.
      void client.interrupt(session(params.sessionId).threadId).catch(() => undefined)
    })
    .onRequest("session/set_mode", ({ params }) =>
      asAcp(async () => {
        const opened = session(params.sessionId)
        await client.setMode(opened.threadId, modeOf(params.modeId))
        return {}
      })
    )
    .onRequest("session/set_config_option", ({ params }) =>
      asAcp(async () => {
        const opened = session(params.sessionId)
        if (params.configId !== MODE_CONFIG_ID || !("value" in params) || typeof params.value !== "string")
          throw acp.RequestError.invalidParams({ path: ["configId"] }, `no config option '${params.configId}'`)
        const mode = modeOf(params.value)
        await client.setMode(opened.threadId, mode)
        // The change itself arrives as `mode.changed`; the reply says the value now in effect.
        return {
          configOptions: opened.configOptions.map((o) =>
            o.id === MODE_CONFIG_ID && o.type === "select" ? { ...o, currentValue: mode } : o
          )
        }
      })
    )
}

const modeOf = (id: string) => {
  const mode = operatingModeOf(id)
  if (mode === undefined) throw acp.RequestError.invalidParams({ path: ["modeId"] }, `no mode '${id}'`)
  return mode
}

import type { PromptId, QuestionId, ThreadId } from "@planbridge/contracts"
import { resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { makeAcpAdapter } from "../../../apps/server/src/provider/acp/AcpAdapter.ts"
import { cursorProfile } from "../../../apps/server/src/provider/acp/profiles/cursor.ts"
import { PlanbridgeClient, PlanbridgeError } from "../src/index.ts"
import { delta, ingest, serverSnapshot, start, started, tempDirs, until, Ws } from "./support/realServer.ts"

/**
 * The client library against a real `planbridge` server (SQLite, WebSocket) in this process:
 * snapshot then live events, resume across a server restart, answers through the inbox
 * (the scripted Cursor-profile agent asks), idempotent retries, a refused token.
 */
const root = fileURLToPath(new URL("../../../", import.meta.url))
const dirs = tempDirs()
afterAll(() => dirs.removeAll())
const temp = dirs.make

describe("@planbridge/client against a real server", () => {
  it("follows a thread from its snapshot, live, and across a server restart with afterSeq", async () => {
    const dataDir = temp("resume")
    let server = await start(dataDir)
    const threadId = "thread-client-1" as ThreadId
    await ingest(server, [started(threadId), ...Array.from({ length: 50 }, (_, i) => delta(threadId, `a${i} `))])
    const client = await PlanbridgeClient.connect({
      url: server.url,
      token: server.token,
      WebSocket: Ws,
      backoff: { initialMs: 20, maxMs: 200 }
    })
    const statuses: Array<string> = []
    client.onStatus((s) => statuses.push(s))
    const store = await client.follow(threadId)
    await until(store.subscribe, () => store.seq === 51)
    expect(store.getSnapshot()).toBe(store.getSnapshot()) // stable until something changes
    await ingest(
      server,
      Array.from({ length: 20 }, (_, i) => delta(threadId, `b${i} `))
    )
    await until(store.subscribe, () => store.seq === 71)

    // The server restarts on the same port; events land while the client is away.
    const { port } = server
    await server.close()
    server = await start(dataDir, { port })
    await ingest(
      server,
      Array.from({ length: 30 }, (_, i) => delta(threadId, `c${i} `))
    )
    await until(store.subscribe, () => store.seq === 101)
    const expected = await serverSnapshot(server, threadId)
    expect(store.getSnapshot()?.items).toEqual(expected.items)
    expect(store.getSnapshot()?.seq).toBe(expected.seq)
    expect(statuses).toContain("reconnecting")
    expect(client.status).toBe("open")
    client.close()
    await server.close()
  })

  it("answers a prompt from the inbox; a retry under the same clientRequestId gets the first outcome", async () => {
    const profile = cursorProfile({
      command: resolve(root, "node_modules/.bin/tsx"),
      args: [resolve(root, "apps/server/test/provider/acp/scriptedCursorAgent.ts")]
    })
    const server = await start(temp("answers"), {
      providers: [
        {
          adapter: makeAcpAdapter(profile, {
            env: { PATH: process.env.PATH, HOME: process.env.HOME, CURSOR_API_KEY: "test-key" }
          }),
          capabilities: profile.capabilities
        }
      ]
    })
    const client = await PlanbridgeClient.connect({ url: server.url, token: server.token, WebSocket: Ws })
    try {
      expect(client.providers.map((p) => p.provider)).toEqual(["cursor"])
      const { threadId } = await client.startSession("cursor", temp("cwd"), "plan")
      await client.follow(threadId)
      await client.startTurn(threadId, "SCENARIO:FULL make hello.txt")
      await until(client.inbox.subscribe, () => client.inbox.getSnapshot().some((e) => e.kind === "prompt"))
      const entry = client.inbox.getSnapshot().find((e) => e.kind === "prompt")
      if (entry?.kind !== "prompt") throw new Error("unreachable")
      const answers = entry.prompt.prompt.questions.map((q) => ({
        questionId: q.id as QuestionId,
        selectedOptionIds: [q.options[0]!.id]
      }))
      const first = await client.respond(entry.prompt.promptId as PromptId, answers, "client-answer-1")
      const again = await client.respond(entry.prompt.promptId as PromptId, answers, "client-answer-1")
      expect(again).toEqual(first)
      await until(
        client.inbox.subscribe,
        () =>
          !client.inbox.getSnapshot().some((e) => e.kind === "prompt" && e.prompt.promptId === entry.prompt.promptId)
      )
      const conflict = await client
        .respond(entry.prompt.promptId as PromptId, [], "client-answer-1")
        .catch((e: unknown) => e)
      expect(conflict).toBeInstanceOf(PlanbridgeError)
      expect((conflict as PlanbridgeError).code).toBe("client_request_conflict")
      const late = await client.respond(entry.prompt.promptId as PromptId, answers).catch((e: unknown) => e)
      expect((late as PlanbridgeError).code).toBe("already_resolved")
    } finally {
      client.close()
      await server.close()
    }
  })

  it("resumeThread: resumed: false while live; after a restart a new session (session/load), resumed: true", async () => {
    const profile = cursorProfile({
      command: resolve(root, "node_modules/.bin/tsx"),
      args: [resolve(root, "apps/server/test/provider/acp/scriptedCursorAgent.ts")]
    })
    const dataDir = temp("resume")
    const options = {
      providers: [
        {
          adapter: makeAcpAdapter(profile, {
            env: { PATH: process.env.PATH, HOME: process.env.HOME, CURSOR_API_KEY: "test-key" }
          }),
          capabilities: profile.capabilities
        }
      ]
    }
    let server = await start(dataDir, options)
    let client = await PlanbridgeClient.connect({ url: server.url, token: server.token, WebSocket: Ws })
    const { threadId } = await client.startSession("cursor", temp("cwd"), "default")
    try {
      expect(await client.resumeThread(threadId)).toEqual({ threadId, resumed: false })
    } finally {
      client.close()
      await server.close()
    }
    server = await start(dataDir, options)
    client = await PlanbridgeClient.connect({ url: server.url, token: server.token, WebSocket: Ws })
    try {
      const refused = await client.startTurn(threadId, "hello").catch((e: unknown) => e)
      expect((refused as PlanbridgeError).code).toBe("session_not_live")
      expect((refused as PlanbridgeError).message).toContain("thread.resume")
      const resumed = await client.resumeThread(threadId)
      expect(resumed).toMatchObject({ threadId, resumed: true })
      expect(resumed.resumedFrom).toMatch(/^scripted-cursor-session-/)
      const store = await client.follow(threadId)
      await until(store.subscribe, () => store.getSnapshot()?.state === "idle")
      expect((await client.listThreads()).find((t) => t.threadId === threadId)?.live).toBe(true)
    } finally {
      client.close()
      await server.close()
    }
  })

  it("rejects a URL the WebSocket refuses with a typed error", async () => {
    const refused = await PlanbridgeClient.connect({ url: "not a url", token: "t", WebSocket: Ws }).catch(
      (e: unknown) => e
    )
    expect(refused).toBeInstanceOf(PlanbridgeError)
    expect((refused as PlanbridgeError).code).toBe("closed")
    expect((refused as PlanbridgeError).message).toContain("cannot open not a url/ws")
  })

  it("rejects a wrong token with unauthorized and stops", async () => {
    const server = await start(temp("token"))
    try {
      const refused = await PlanbridgeClient.connect({ url: server.url, token: "wrong", WebSocket: Ws }).catch(
        (e: unknown) => e
      )
      expect(refused).toBeInstanceOf(PlanbridgeError)
      expect((refused as PlanbridgeError).code).toBe("unauthorized")
    } finally {
      await server.close()
    }
  })
})

import type { ThreadId } from "@planbridge/contracts"
import { afterAll, describe, expect, it } from "vitest"
import { PlanbridgeClient, PlanbridgeError } from "../src/index.ts"
import { start, tempDirs, Ws } from "./support/realServer.ts"

/**
 * A command larger than the server takes (issue 27, item 2): it used to wait forever, the server's
 * `frame_too_large` carrying `id: null`. The client knows the limit from `welcome` and refuses
 * such a command itself, typed, naming the limit; the connection goes on.
 */
const dirs = tempDirs()
afterAll(() => dirs.removeAll())

const refusal = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => "resolved",
    (error: unknown) => error
  )

describe("a command above the server's frame limit", () => {
  it("is refused frame_too_large at once, with the limit from welcome; the connection stays usable", async () => {
    const server = await start(dirs.make("frames"))
    const client = await PlanbridgeClient.connect({ url: server.url, token: server.token, WebSocket: Ws })
    expect(client.limits).toEqual({ maxFrameBytes: 256 * 1024 })
    const threadId = "thread-big" as ThreadId

    // 300 KiB of text (more bytes on the wire than characters: "é" is two in UTF-8).
    const error = await refusal(client.startTurn(threadId, "é".repeat(150 * 1024)))
    expect(error).toBeInstanceOf(PlanbridgeError)
    expect(error).toMatchObject({ code: "frame_too_large", path: ["command"] })
    expect(String((error as PlanbridgeError).message)).toMatch(/at most 262144 \(256 KiB\)/)

    // Just under the limit in characters but over it in bytes: refused too.
    const bytesOver = await refusal(client.startTurn(threadId, "é".repeat(130 * 1024)))
    expect(bytesOver).toMatchObject({ code: "frame_too_large" })
    // Below it: sent, and answered by the server (there is no such thread).
    expect(await refusal(client.startTurn(threadId, "x".repeat(200 * 1024)))).toMatchObject({
      code: "unknown_thread"
    })
    expect(await client.listThreads()).toEqual([])
    expect(client.status).toBe("open")
    client.close()
    await server.close()
  })

  it("follows the server's limit, not a constant", async () => {
    const server = await start(dirs.make("small-frames"), { maxFrameBytes: 4096 })
    const client = await PlanbridgeClient.connect({ url: server.url, token: server.token, WebSocket: Ws })
    expect(client.limits).toEqual({ maxFrameBytes: 4096 })
    const threadId = "thread-small" as ThreadId
    const error = await refusal(client.startTurn(threadId, "x".repeat(5000)))
    expect(error).toMatchObject({ code: "frame_too_large" })
    expect(String((error as PlanbridgeError).message)).toMatch(/at most 4096 \(4 KiB\)/)
    expect(await refusal(client.startTurn(threadId, "x".repeat(3000)))).toMatchObject({ code: "unknown_thread" })
    client.close()
    await server.close()
  })
})

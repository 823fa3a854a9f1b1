import { spawn, type ChildProcess } from "node:child_process"
import { mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { createInterface } from "node:readline"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { openRaw, statusOf, upgradeRequest } from "../support/rawHttp.ts"
import { connect } from "../support/wsClient.ts"

const FD_LIMIT = 256
const root = resolve(import.meta.dirname, "../../../..")
let child: ChildProcess
let dir: string
let port: number
let token: string

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "planbridge-fd-"))
  // `exec` keeps the pid: /proc/<pid>/fd is the server's own descriptor table, under the limit.
  const server = "apps/server/bin/run-ts.mjs apps/server/test/support/serverProcess.ts"
  const command = `ulimit -n ${FD_LIMIT} && exec node ${server} "$1"`
  child = spawn("bash", ["-c", command, "bash", dir], { cwd: root, stdio: ["pipe", "pipe", "inherit"] })
  const first = await new Promise<string>((res, reject) => {
    createInterface({ input: child.stdout! }).once("line", res)
    child.once("exit", (code) => reject(new Error(`server process exited with ${code}`)))
  })
  ;({ port, token } = JSON.parse(first) as { port: number; token: string })
})
afterAll(async () => {
  const exited = new Promise((res) => child.once("exit", res))
  child.stdin!.end()
  await exited
  rmSync(dir, { recursive: true, force: true })
})

const openFds = () => readdirSync(`/proc/${child.pid}/fd`).length

/** Polls the server's descriptor table (a count has no event to await) until it drops to `max`. */
const fdsDropTo = async (max: number, timeoutMs = 3_000): Promise<number> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const n = openFds()
    if (n <= max || Date.now() > deadline) return n
    await new Promise((res) => setTimeout(res, 20))
  }
}

describe("refused upgrades free their sockets", () => {
  const title = `${FD_LIMIT + 44} refused upgrades under ulimit -n ${FD_LIMIT}: fds back at start, then a client served`
  it(title, async () => {
    const start = openFds()
    const refusals = [
      (i: number) => upgradeRequest(port, `/not-ws/${i}`),
      (i: number) => upgradeRequest(port, `/api/threads?n=${i}`),
      (i: number) => upgradeRequest(port, `/api/threads?n=${i}`, { authorization: `Bearer ${token}` }),
      () => upgradeRequest(port, "/ws", { origin: "https://evil.example" })
    ]
    const statuses = new Set<number>()
    const total = FD_LIMIT + 44
    for (let batch = 0; batch < total; batch += 25) {
      await Promise.all(
        Array.from({ length: Math.min(25, total - batch) }, async (_, k) => {
          const i = batch + k
          const raw = await openRaw(port, refusals[i % refusals.length]!(i))
          statuses.add(statusOf(await raw.head))
          // The client goes away as a page would; the server must not keep its half of the socket.
          raw.socket.end()
        })
      )
    }
    expect(await fdsDropTo(start)).toBeLessThanOrEqual(start)
    const client = await connect({ url: `http://127.0.0.1:${port}`, token })
    expect((await client.command({ type: "threads.list" })).type).toBe("result")
    await client.close()
    // Refused, every one (an upgrade to an HTTP route is not turned into a WebSocket either).
    expect([...statuses].sort()).toEqual([403, 404])
  })
})

/**
 * A scripted ACP agent that only lists sessions: `initialize` announces `sessionCapabilities`
 * `{list, resume}`, and every `session/list` answers a page of LISTING_PAGE_SIZE sessions with a
 * `nextCursor`, without end, counting the pages it served in LISTING_PAGES_FILE. It plays an
 * agent with a very long history, to check Planbridge's bounds on a listing.
 */
import { writeFileSync } from "node:fs"
import { createInterface } from "node:readline"

const pageSize = Number(process.env.LISTING_PAGE_SIZE ?? "10")
const pagesFile = process.env.LISTING_PAGES_FILE
let pages = 0

const reply = (id: unknown, result: unknown) =>
  process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", id, result })}\n`)

createInterface({ input: process.stdin }).on("line", (line) => {
  const msg = JSON.parse(line) as { id?: unknown; method?: string; params?: { cursor?: string } }
  if (msg.method === "initialize")
    reply(msg.id, {
      protocolVersion: 1,
      agentCapabilities: { loadSession: false, sessionCapabilities: { list: {}, resume: {} } },
      agentInfo: { name: "scripted-listing", version: "0.0.0" }
    })
  else if (msg.method === "session/list") {
    const start = Number(msg.params?.cursor ?? "0")
    pages++
    if (pagesFile !== undefined) writeFileSync(pagesFile, String(pages))
    const sessions = Array.from({ length: pageSize }, (_, i) => ({ sessionId: `s-${start + i}`, cwd: "/tmp" }))
    reply(msg.id, { sessions, nextCursor: String(start + pageSize) })
  } else if (msg.id !== undefined)
    process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", id: msg.id, error: { code: -32601, message: "no" } })}\n`)
})

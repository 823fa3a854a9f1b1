import { Effect } from "effect"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { LIST_MAX_PAGES, LIST_MAX_SESSIONS, listAcpSessions } from "../../../src/provider/acp/AcpSessionList.ts"
import { cursorProfile } from "../../../src/provider/acp/profiles/cursor.ts"

/** The bounds of `session/list` (AcpSessionList.ts) against an agent whose listing never ends. */
const root = resolve(import.meta.dirname, "../../../../..")
const dir = mkdtempSync(join(tmpdir(), "planbridge-listing-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const profile = cursorProfile({
  command: resolve(root, "node_modules/.bin/tsx"),
  args: [resolve(root, "apps/server/test/provider/acp/scriptedListingAgent.ts")]
})
const listWith = (pageSize: number) => {
  const pagesFile = join(dir, `pages-${pageSize}`)
  const env = { PATH: process.env.PATH, LISTING_PAGE_SIZE: String(pageSize), LISTING_PAGES_FILE: pagesFile }
  return Effect.runPromise(listAcpSessions(profile, env, undefined)).then((list) => ({
    list,
    pages: Number(readFileSync(pagesFile, "utf8"))
  }))
}

describe("session/list bounds", { timeout: 60_000 }, () => {
  it(`stops at ${LIST_MAX_SESSIONS} sessions and says the listing is truncated`, async () => {
    const { list, pages } = await listWith(60)
    expect(list.sessions).toHaveLength(LIST_MAX_SESSIONS)
    expect(list.truncated).toBe(true)
    expect(pages).toBe(Math.ceil(LIST_MAX_SESSIONS / 60))
    expect(list.takeUpWith).toBe("session/resume")
  })

  it(`asks for at most ${LIST_MAX_PAGES} pages`, async () => {
    const { list, pages } = await listWith(5)
    expect(pages).toBe(LIST_MAX_PAGES)
    expect(list.sessions).toHaveLength(LIST_MAX_PAGES * 5)
    expect(list.truncated).toBe(true)
  })
})

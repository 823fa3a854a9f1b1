// A Playwright test of a page (here Planbridge's own web client, which the replay server serves
// at `/`) against a recorded Cursor session: checklist, question, plan, approval. Point `page`
// at your own frontend instead, giving it `server.url` and `server.token`.
//   PLANBRIDGE_REPLAY_DIR=path/to/fixtures CHROMIUM=/usr/bin/chromium npx vitest run page.test.mjs
import { programsStartedBy, startReplayServer } from "@planbridge/testkit"
import { chromium } from "playwright-core"
import { afterAll, beforeAll, expect, test } from "vitest"

const dir = process.env.PLANBRIDGE_REPLAY_DIR ?? new URL("../../../fixtures/", import.meta.url).pathname
let server
let browser

beforeAll(async () => {
  server = await startReplayServer({ dir })
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    args: ["--no-sandbox"]
  })
})
afterAll(async () => {
  await browser?.close()
  await server?.close()
})

test("a recorded Cursor session, answered from the page", async () => {
  const page = await browser.newPage()
  // The token travels in the fragment, which the browser never sends to the server.
  await page.goto(`${server.url}/#token=${server.token}`)
  await page.getByLabel("Working directory").fill(process.cwd())
  const provider = "cursor-scripted-cursor-plan-question-permission-elicit-cancel"
  await page.locator(`[data-provider="${provider}"]`).getByRole("button").click()
  await page.getByLabel("Message").fill("Create hello.txt")
  await page.getByRole("button", { name: "Send" }).click()

  await page.getByRole("region", { name: "Checklist" }).waitFor()
  await page.getByRole("group", { name: "Which language?" }).getByLabel("TypeScript").check()
  await page.getByRole("group", { name: "Which extras?" }).getByLabel("Tests").check()
  await page.getByRole("group", { name: "Which extras?" }).getByLabel("Docs").check()
  await page.getByRole("button", { name: "Submit" }).click()

  const plan = page.getByRole("article", { name: "Proposed plan" })
  await plan.getByRole("button", { name: "Approve", exact: true }).click()
  await page.getByRole("button", { name: "Allow once" }).click()
  await page.getByText("Done.", { exact: true }).waitFor()
  // The session ran without any provider program below the server.
  expect(programsStartedBy(server.pid)).toEqual([])
})

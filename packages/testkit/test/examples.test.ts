import { spawn, spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { beforeAll, describe, expect, it } from "vitest"
import { buildClient } from "../../client/test/support/demoServer.ts"

/**
 * The kit's documented examples (packages/testkit/examples: one vitest test, one Playwright test
 * of a page) run as a user's project runs them: vitest on plain .mjs files under plain Node (no
 * TypeScript loader, no inherited NODE_OPTIONS), importing the built @planbridge/testkit and
 * @planbridge/client, against `planbridge serve --replay fixtures/`.
 */
const repoRoot = fileURLToPath(new URL("../../../", import.meta.url))
const STEP_MS = 180_000

beforeAll(async () => {
  await buildClient()
  const built = spawnSync("npm", ["run", "build", "--workspace", "@planbridge/testkit"], {
    cwd: repoRoot,
    encoding: "utf8"
  })
  if (built.status !== 0) throw new Error(`building the kit failed:\n${built.stdout}\n${built.stderr}`)
}, STEP_MS)

const runExamples = () =>
  new Promise<{ readonly code: number | null; readonly output: string }>((resolve) => {
    const child = spawn(
      process.execPath,
      ["node_modules/vitest/vitest.mjs", "run", "--config", "packages/testkit/examples/vitest.config.mjs"],
      {
        cwd: repoRoot,
        env: {
          PATH: process.env.PATH ?? "",
          HOME: process.env.HOME ?? "",
          PLANBRIDGE_REPLAY_DIR: `${repoRoot}fixtures`,
          // The server the kit starts runs this checkout's sources; the kit and client are the builds.
          PLANBRIDGE_FROM_SOURCE: "1",
          NO_COLOR: "1"
        },
        stdio: ["ignore", "pipe", "pipe"]
      }
    )
    let output = ""
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
    child.on("exit", (code) => resolve({ code, output }))
  })

describe("the test kit's examples, from plain Node on its build", () => {
  it(
    "the vitest example and the Playwright page example pass",
    async () => {
      const { code, output } = await runExamples()
      expect(output).toMatch(/recorded-session\.test\.mjs/u)
      expect(output).toMatch(/page\.test\.mjs/u)
      expect(output).toMatch(/Tests\s+2 passed \(2\)/u)
      expect(code, output).toBe(0)
    },
    STEP_MS
  )
})

import { Effect } from "effect"
import { rmSync } from "node:fs"
import { afterEach, expect, it, vi } from "vitest"
import type { RunningServer } from "../../src/http/HttpServer.ts"
import { startLoggedServer } from "../support/logCapture.ts"

/**
 * The runtime's log lines (`Effect.logWarning` in sessions, resume, notifications) are the
 * server's: written to its log destination, scrubbed of the token, never to the console — whose
 * stdout, under `planbridge acp`, is the editor's ACP channel.
 */
let server: RunningServer | undefined
let dir: string | undefined
afterEach(async () => {
  await server?.close()
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
  vi.restoreAllMocks()
})

const consoleLines = () => {
  const lines: Array<string> = []
  for (const method of ["log", "info", "warn", "error", "debug"] as const)
    vi.spyOn(console, method).mockImplementation((...args: Array<unknown>) => void lines.push(args.join(" ")))
  return lines
}

it("an Effect warning is a line of the server's log, scrubbed, and nothing reaches the console", async () => {
  const started = await startLoggedServer("runtime-log", { logLevel: "warn" })
  ;({ server, dir } = started)
  const log = started.log
  const onConsole = consoleLines()
  const token = server.token
  await server.runtime.runPromise(
    Effect.logWarning(`a session warned with ${token} in it`, { detail: 1 }).pipe(
      Effect.andThen(Effect.logInfo("below the server's level")),
      Effect.andThen(Effect.logError("it failed", new Error("the cause's words")))
    )
  )
  await log.until((lines) => lines.some((line) => line.msg?.startsWith("it failed") === true))
  const lines = log.parsed()
  const warned = lines.find((line) => line.msg?.startsWith("a session warned"))
  expect(warned).toMatchObject({ level: 40, msg: "a session warned with [redacted] in it { detail: 1 }" })
  const failed = lines.find((line) => line.msg?.startsWith("it failed"))
  expect(failed).toMatchObject({ level: 50 })
  expect(failed?.msg).toContain("Error: the cause's words")
  expect(lines.some((line) => line.msg === "below the server's level")).toBe(false)
  expect(log.text()).not.toContain(token)
  expect(onConsole).toEqual([])
})

it("a silent server logs nothing, its runtime's lines included", async () => {
  const started = await startLoggedServer("runtime-log", { logLevel: "silent" })
  ;({ server, dir } = started)
  const onConsole = consoleLines()
  await server.runtime.runPromise(Effect.logWarning("a session warned"))
  expect(onConsole).toEqual([])
  expect(started.log.text()).toBe("")
})

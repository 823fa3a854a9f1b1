import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type IncomingMessage, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { loadOrCreateToken } from "../../src/http/Security.ts"
import { runCli } from "./support/runCli.ts"

/**
 * Where `planbridge` writes errors: stderr, always. Under `--json`, stdout holds the JSON result
 * or nothing, and the error is one JSON line on stderr; exit codes are the documented ones. The
 * `prompts` commands run against a stand-in for the operator API on loopback that answers as
 * the real one does (PROTOCOL.md#operator-http-api), recording what it was sent.
 */
interface Received {
  readonly method: string
  readonly url: string
  readonly authorization: string | undefined
  readonly body: unknown
}

const received: Array<Received> = []
let api: Server
let url = ""
const dataDir = mkdtempSync(join(tmpdir(), "planbridge-cli-errors-"))
// The token a server on this data dir would have made: `prompts` reads it, never creates one.
loadOrCreateToken(dataDir)

const readBody = async (req: IncomingMessage): Promise<unknown> => {
  let text = ""
  for await (const chunk of req) text += String(chunk)
  return text === "" ? undefined : (JSON.parse(text) as unknown)
}

beforeAll(async () => {
  api = createServer((req, res) => {
    void readBody(req).then((body) => {
      received.push({ method: req.method ?? "", url: req.url ?? "", authorization: req.headers.authorization, body })
      const send = (status: number, payload: unknown) =>
        res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(payload))
      const refuse = (status: number, code: string, message: string) => send(status, { error: { code, message } })
      if (req.url === "/api/prompts" || req.url?.startsWith("/api/prompts?")) return send(200, { prompts: [] })
      if (req.url === "/api/prompts/p-1/answer") {
        return refuse(422, "invalid_answer", "option 'opt-7' is not an option of question 'db_choice'")
      }
      if (req.url === "/api/prompts/p-3/answer") return send(200, { promptId: "p-3", resolution: "empty" })
      if (req.url === "/api/prompts/p-1/cancel") return refuse(409, "already_resolved", "p-1 is already resolved")
      if (req.url === "/api/prompts/p-2") return send(200, { promptId: "p-2", unexpected: true })
      return send(404, { statusCode: 404, error: "Not Found", message: `Route ${req.method}:${req.url} not found` })
    })
  })
  await new Promise<void>((resolve) => api.listen(0, "127.0.0.1", resolve))
  url = `http://127.0.0.1:${(api.address() as AddressInfo).port}`
})

afterAll(async () => {
  await new Promise<void>((resolve) => api.close(() => resolve()))
  rmSync(dataDir, { recursive: true, force: true })
})

const prompts = (...args: ReadonlyArray<string>) => runCli("prompts", ...args, "--url", url, "--data-dir", dataDir)

describe("planbridge errors", () => {
  it("a refused answer: the code and message on stderr, nothing on stdout, exit 1", async () => {
    const answer = ["--option", "db_choice=opt-7", "--option", "test_scope=opt-0", "--text", "test_scope=more"]
    const run = await prompts("answer", "p-1", ...answer)
    expect(run).toEqual({
      code: 1,
      stdout: "",
      stderr: "planbridge prompts answer: invalid_answer: option 'opt-7' is not an option of question 'db_choice'\n"
    })
    // What reached the server: one entry per question, with the token from the data dir.
    const sent = received.at(-1)!
    expect(sent).toMatchObject({ method: "POST", url: "/api/prompts/p-1/answer" })
    expect(sent.authorization).toBe(`Bearer ${readFileSync(join(dataDir, "token"), "utf8").trim()}`)
    expect(sent.body).toEqual({
      answers: [
        { questionId: "db_choice", selectedOptionIds: ["opt-7"] },
        { questionId: "test_scope", selectedOptionIds: ["opt-0"], text: "more" }
      ]
    })
  })

  it("the same with --json: stdout stays empty, stderr is one JSON line with the code, exit 1", async () => {
    const run = await prompts("answer", "p-1", "--option", "db_choice=opt-7", "--json")
    expect(run.code).toBe(1)
    expect(run.stdout).toBe("")
    expect(run.stderr.endsWith("\n")).toBe(true)
    expect(run.stderr.trimEnd().split("\n")).toHaveLength(1)
    expect(JSON.parse(run.stderr)).toEqual({
      error: { code: "invalid_answer", message: "option 'opt-7' is not an option of question 'db_choice'" }
    })
    const cancelled = await prompts("cancel", "p-1", "--json")
    expect(cancelled).toMatchObject({ code: 1, stdout: "" })
    expect(JSON.parse(cancelled.stderr)).toMatchObject({ error: { code: "already_resolved" } })
  })

  it("--json success: stdout is the API's JSON body", async () => {
    const run = await prompts("list", "--status", "pending", "--json")
    expect(run).toMatchObject({ code: 0, stderr: "" })
    expect(JSON.parse(run.stdout)).toEqual({ prompts: [] })
    expect(received.at(-1)!.url).toBe("/api/prompts?status=pending")
    expect(await prompts("list")).toEqual({ code: 0, stdout: "no prompts\n", stderr: "" })
  })

  it("the HTTP framework's own error shape and an unreadable reply are reported too", async () => {
    expect(await prompts("show", "p-9")).toEqual({
      code: 1,
      stdout: "",
      stderr: "planbridge prompts show: http_404: Route GET:/api/prompts/p-9 not found\n"
    })
    const unreadable = await prompts("show", "p-2")
    expect(unreadable).toMatchObject({ code: 1, stdout: "" })
    expect(unreadable.stderr).toMatch(/^planbridge prompts show: bad_response: the server's reply .*threadId/s)
    // Under --json the body is passed through as the server sent it: the CLI does not interpret it.
    expect(JSON.parse((await prompts("show", "p-2", "--json")).stdout)).toEqual({ promptId: "p-2", unexpected: true })
  })

  it("no server: said on stderr (as JSON under --json), exit 1", async () => {
    // A port that was just free: nothing listens there.
    const probe = createServer()
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve))
    const closed = `http://127.0.0.1:${(probe.address() as AddressInfo).port}`
    await new Promise<void>((resolve) => probe.close(() => resolve()))
    const text = await runCli("prompts", "list", "--url", closed, "--data-dir", dataDir)
    expect(text).toMatchObject({ code: 1, stdout: "" })
    expect(text.stderr).toContain(`planbridge prompts list: unreachable: no server at ${closed} (start it with`)
    expect(text.stderr).toContain("ECONNREFUSED")
    const json = await runCli("prompts", "list", "--url", closed, "--data-dir", dataDir, "--json")
    expect(json).toMatchObject({ code: 1, stdout: "" })
    expect(JSON.parse(json.stderr)).toMatchObject({ error: { code: "unreachable" } })
  })

  it("a token that cannot be read: said on stderr (as JSON under --json), exit 1, nothing sent", async () => {
    const notADir = join(dataDir, "a-file")
    writeFileSync(notADir, "not a directory\n")
    const before = received.length
    const run = await runCli("prompts", "list", "--url", url, "--data-dir", notADir, "--json")
    expect(run).toMatchObject({ code: 1, stdout: "" })
    expect(JSON.parse(run.stderr)).toMatchObject({ error: { code: "no_token" } })
    expect(received.length).toBe(before)
  })

  it("usage errors, with or without --json: stderr only, naming the closest valid option, exit 2", async () => {
    for (const json of [[], ["--json"]]) {
      const run = await prompts("answer", "p-1", "--optoin", "db_choice=opt-1", ...json)
      expect(run).toEqual({
        code: 2,
        stdout: "",
        stderr:
          "planbridge prompts answer: unknown option '--optoin'; did you mean '--option'?\n" +
          "usage: planbridge prompts answer [flags] <PROMPT_ID>\n" +
          "Run 'planbridge prompts answer --help' for its options, defaults and examples.\n"
      })
    }
    const badPair = await prompts("answer", "p-1", "--option", "db_choice", "--json")
    expect(badPair).toMatchObject({ code: 2, stdout: "", stderr: expect.stringContaining("expected QUESTION=OPTION") })
    const usage = (stderr: string) => ({ code: 2, stdout: "", stderr: expect.stringContaining(stderr) })
    expect(await runCli("serve", "--prot", "1")).toMatchObject(usage("did you mean '--port'?"))
    expect(await runCli("serve", "--port", "70000")).toMatchObject(usage("between 0 and 65535"))
    expect(await runCli("sevre")).toMatchObject(usage("unknown command 'sevre'; did you mean 'serve'?"))
    expect(await runCli("prompts", "show")).toMatchObject(usage("Missing required argument: PROMPT_ID"))
    // Without a near match, the error lists what the command takes instead.
    expect(await runCli("schema", "--bogus")).toMatchObject(
      usage("unknown option '--bogus'; this command takes '--out', '--help', '--completions'")
    )
  })

  it("answer without --option or --text is a usage error, sending nothing; skipping is an explicit --skip", async () => {
    const before = received.length
    const bare = await prompts("answer", "p-3")
    expect(bare).toMatchObject({ code: 2, stdout: "" })
    expect(bare.stderr).toContain("planbridge prompts answer: give the answer with --option QUESTION=OPTION")
    expect(bare.stderr).toContain("or --skip to skip the prompt")
    const mixed = await prompts("answer", "p-3", "--skip", "--option", "db_choice=opt-1")
    expect(mixed).toMatchObject({ code: 2, stdout: "", stderr: expect.stringContaining("without --option or --text") })
    expect(received.length).toBe(before)
    // --skip: an empty answer, which the server resolves `empty`; said as what it is.
    expect(await prompts("answer", "p-3", "--skip")).toEqual({ code: 0, stdout: "skipped p-3\n", stderr: "" })
    expect(received.at(-1)).toMatchObject({ method: "POST", url: "/api/prompts/p-3/answer", body: { answers: [] } })
  })

  it("a failure inside a command (an unwritable --out) is exit 1 with its message on stderr", async () => {
    const run = await runCli("schema", "--out", join(dataDir, "no-such-dir", "schema.json"))
    expect(run).toMatchObject({ code: 1, stdout: "" })
    expect(run.stderr).toContain("ENOENT")
  })
})

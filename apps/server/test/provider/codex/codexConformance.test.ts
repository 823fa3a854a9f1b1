import { execFile } from "node:child_process"
import { mkdtemp, readFile, rm } from "node:fs/promises"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { promisify } from "node:util"
import Ajv from "ajv"
import { Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { classify } from "../../../src/provider/codex/CodexLine.ts"
import { DecodedNotificationMethods } from "../../../src/provider/codex/CodexNotifications.ts"
import * as P from "../../../src/provider/codex/CodexProtocol.ts"
import { DecodedServerRequestMethods } from "../../../src/provider/codex/CodexServerRequests.ts"
import { assertLoopbackOnly } from "../../support/loopbackOnly.ts"
import { loadCodexFixtures } from "./fixtures.ts"
import { codexJsUnderTest } from "./harness.ts"

/**
 * Conformance with the installed app-server's own protocol description: the JSON Schema that
 * `codex app-server generate-json-schema --experimental` prints for the codex under test (the
 * pinned `@openai/codex`, or the one `PLANBRIDGE_TEST_CODEX_JS` names for the drift gate),
 * generated here into a temporary directory (never committed). Three checks:
 * 1. every native message the adapter decodes in the recorded transcripts — both directions —
 *    validates against the generated schema (ajv, the JSON-Schema validator already in
 *    node_modules: the hoisted ajv 6, draft-07, which is the dialect codex emits);
 * 2. every property the adapter's Effect Schemas read is declared by the generated definition,
 *    so a renamed field fails here even when no transcript exercises it;
 * 3. the recorded transcripts were recorded with the pinned version (re-record on a pin move).
 */

interface JsonSchemaFile {
  readonly definitions: Record<
    string,
    { readonly properties?: Record<string, unknown>; readonly required?: ReadonlyArray<string> }
  >
  readonly oneOf?: ReadonlyArray<{
    readonly properties: {
      readonly method: { readonly enum: ReadonlyArray<string> }
      readonly params?: { readonly $ref?: string }
    }
  }>
}

const require = createRequire(import.meta.url)
const pinnedPackage = require.resolve("@openai/codex/package.json")
const codexJs = codexJsUnderTest() ?? join(dirname(pinnedPackage), "bin", "codex.js")
const versionOf = (packageJson: string) => (require(packageJson) as { readonly version: string }).version
/** The version whose schema is checked: the package that holds the codex under test. */
const versionUnderTest = versionOf(join(dirname(dirname(codexJs)), "package.json"))

let dir = ""
const files: Record<string, JsonSchemaFile> = {}
const ajv = new Ajv({ allErrors: true })
// Codex annotates its integers with Rust widths; check them as integers (and non-negative ones).
for (const name of ["int32", "int64"])
  ajv.addFormat(name, { type: "number", validate: (n: number) => Number.isInteger(n) })
for (const name of ["uint", "uint8", "uint16", "uint32", "uint64"])
  ajv.addFormat(name, { type: "number", validate: (n: number) => Number.isInteger(n) && n >= 0 })

const load = async (name: string) => {
  files[name] = JSON.parse(await readFile(join(dir, name), "utf8")) as JsonSchemaFile
}

beforeAll(async () => {
  assertLoopbackOnly()
  dir = await mkdtemp(join(tmpdir(), "planbridge-codex-schema-"))
  await promisify(execFile)(process.execPath, [
    codexJs,
    "app-server",
    "generate-json-schema",
    "--experimental",
    "--out",
    dir
  ])
  for (const name of [
    "ServerNotification.json",
    "ServerRequest.json",
    "ClientRequest.json",
    "ToolRequestUserInputResponse.json",
    "CommandExecutionRequestApprovalResponse.json",
    "v2/ThreadStartResponse.json",
    "v2/ThreadResumeResponse.json",
    "v2/TurnStartResponse.json",
    "v2/TurnInterruptResponse.json"
  ]) {
    await load(name)
  }
})
afterAll(async () => {
  if (dir !== "") await rm(dir, { recursive: true, force: true })
})

/** The params definition each method of a `oneOf` message union points at. */
const paramsRefs = (file: JsonSchemaFile): Map<string, string> =>
  new Map(
    (file.oneOf ?? []).flatMap((branch) => {
      const ref = branch.properties.params?.$ref
      const method = branch.properties.method.enum[0]
      return ref !== undefined && method !== undefined ? [[method, ref.replace("#/definitions/", "")] as const] : []
    })
  )

const compiled = new Map<unknown, Map<string, ReturnType<typeof ajv.compile>>>()
const cached = (file: JsonSchemaFile, definition: string, make: () => ReturnType<typeof ajv.compile>) => {
  const perFile = compiled.get(file) ?? new Map<string, ReturnType<typeof ajv.compile>>()
  compiled.set(file, perFile)
  const hit = perFile.get(definition)
  if (hit !== undefined) return hit
  const validate = make()
  perFile.set(definition, validate)
  return validate
}
const validator = (file: JsonSchemaFile, definition: string) =>
  cached(file, definition, () =>
    ajv.compile({ definitions: file.definitions, allOf: [{ $ref: `#/definitions/${definition}` }] })
  )
const rootValidator = (file: JsonSchemaFile) => cached(file, "", () => ajv.compile(file))

describe(`Codex app-server ${versionUnderTest} conformance (generated JSON Schema)`, () => {
  it("the recorded transcripts were recorded with the pinned version", () => {
    const recorded = new Set(loadCodexFixtures().map((f) => f.lines[0]?.codexVersion))
    expect([...recorded]).toEqual([versionOf(pinnedPackage)])
  })

  it("every message the adapter decodes in the recorded transcripts validates", () => {
    const notifications = paramsRefs(files["ServerNotification.json"]!)
    const serverRequests = paramsRefs(files["ServerRequest.json"]!)
    const clientRequests = paramsRefs(files["ClientRequest.json"]!)
    const decodedNotifications = new Set<string>(DecodedNotificationMethods)
    const decodedRequests = new Set<string>(DecodedServerRequestMethods)
    const responseSchemas: Record<string, JsonSchemaFile> = {
      "thread/start": files["v2/ThreadStartResponse.json"]!,
      "thread/resume": files["v2/ThreadResumeResponse.json"]!,
      "turn/start": files["v2/TurnStartResponse.json"]!,
      "turn/interrupt": files["v2/TurnInterruptResponse.json"]!
    }
    const answerSchemas: Record<string, JsonSchemaFile> = {
      "item/tool/requestUserInput": files["ToolRequestUserInputResponse.json"]!,
      "item/commandExecution/requestApproval": files["CommandExecutionRequestApprovalResponse.json"]!
    }
    const checked = new Map<string, number>()
    const failures: Array<string> = []
    const check = (what: string, validate: ReturnType<typeof ajv.compile>, value: unknown) => {
      checked.set(what, (checked.get(what) ?? 0) + 1)
      if (!validate(value)) failures.push(`${what}: ${ajv.errorsText(validate.errors)}`)
    }

    for (const fixture of loadCodexFixtures()) {
      const clientMethods = new Map<string, string>()
      const serverMethods = new Map<string, string>()
      for (const line of fixture.lines) {
        if (line.dir !== "out" && line.dir !== "in") continue
        if (!("msg" in line)) continue
        const c = classify(line.msg)
        const key = (id: unknown) => JSON.stringify(id)
        if (line.dir === "in" && c.type === "notification" && decodedNotifications.has(c.method)) {
          check(`s2c ${c.method}`, validator(files["ServerNotification.json"]!, notifications.get(c.method)!), c.params)
        } else if (line.dir === "in" && c.type === "request") {
          serverMethods.set(key(c.id), c.method)
          if (decodedRequests.has(c.method))
            check(`s2c ${c.method}`, validator(files["ServerRequest.json"]!, serverRequests.get(c.method)!), c.params)
        } else if (line.dir === "in" && c.type === "response" && c.result !== undefined) {
          const method = clientMethods.get(key(c.id))
          const file = method !== undefined ? responseSchemas[method] : undefined
          if (file !== undefined) check(`s2c ${method} result`, rootValidator(file), c.result)
        } else if (line.dir === "out" && c.type === "request") {
          clientMethods.set(key(c.id), c.method)
          check(`c2s ${c.method}`, validator(files["ClientRequest.json"]!, clientRequests.get(c.method)!), c.params)
        } else if (line.dir === "out" && c.type === "response" && c.result !== undefined) {
          const method = serverMethods.get(key(c.id))
          const file = method !== undefined ? answerSchemas[method] : undefined
          if (file !== undefined) check(`c2s ${method} answer`, rootValidator(file), c.result)
        }
      }
    }
    expect(failures).toEqual([])
    // Not vacuous: the messages that carry plans, questions and answers were all checked.
    for (const what of [
      "s2c item/tool/requestUserInput",
      "c2s item/tool/requestUserInput answer",
      "s2c item/commandExecution/requestApproval",
      "c2s item/commandExecution/requestApproval answer",
      "s2c serverRequest/resolved",
      "s2c item/plan/delta",
      "s2c turn/plan/updated",
      "s2c item/completed",
      "s2c turn/completed",
      "s2c thread/status/changed",
      "s2c thread/start result",
      "s2c thread/resume result",
      "c2s thread/resume",
      "s2c turn/start result",
      "c2s turn/start",
      "c2s turn/interrupt",
      "c2s initialize"
    ]) {
      expect(checked.get(what) ?? 0, what).toBeGreaterThan(0)
    }
  })

  it("every property the adapter's schemas read is declared by the generated definitions", () => {
    const defs = { ...files["ServerNotification.json"]!.definitions, ...files["ServerRequest.json"]!.definitions }
    const pairs: ReadonlyArray<readonly [string, Schema.Struct<Schema.Struct.Fields>]> = [
      ["ThreadStatusChangedNotification", P.ThreadStatusChanged],
      ["TurnCompletedNotification", P.TurnNotification],
      ["Turn", P.Turn],
      ["TurnError", P.TurnError],
      ["ItemStartedNotification", P.ItemNotification],
      ["AgentMessageDeltaNotification", P.ItemDelta],
      ["PlanDeltaNotification", P.ItemDelta],
      ["TurnPlanUpdatedNotification", P.TurnPlanUpdated],
      ["ThreadTokenUsageUpdatedNotification", P.ThreadTokenUsageUpdated],
      ["ErrorNotification", P.ErrorNotification],
      ["WarningNotification", P.WarningNotification],
      ["ConfigWarningNotification", P.SummaryNotification],
      ["ServerRequestResolvedNotification", P.ServerRequestResolved],
      ["ToolRequestUserInputParams", P.RequestUserInputParams],
      ["ToolRequestUserInputQuestion", P.RequestUserInputQuestion],
      ["CommandExecutionRequestApprovalParams", P.CommandApprovalParams],
      ["FileChangeRequestApprovalParams", P.FileChangeApprovalParams]
    ]
    const missing: Array<string> = []
    for (const [definition, schema] of pairs) {
      const properties = defs[definition]?.properties
      if (properties === undefined) {
        missing.push(`${definition}: no such definition`)
        continue
      }
      for (const field of Object.keys(schema.fields)) {
        if (!(field in properties)) missing.push(`${definition}.${field}`)
      }
    }
    expect(missing).toEqual([])
  })
})

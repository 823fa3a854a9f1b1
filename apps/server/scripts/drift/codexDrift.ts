import { execFile } from "node:child_process"
import { join } from "node:path"
import { promisify } from "node:util"
import { Schema } from "effect"
import { DecodedNotificationMethods } from "../../src/provider/codex/CodexNotifications.ts"
import { DecodedServerRequestMethods } from "../../src/provider/codex/CodexServerRequests.ts"
import { readPackageJson, readSchemaDoc, type ProviderReport, type Surface } from "./report.ts"
import { diffSurface, type Json, type SchemaDoc } from "./schemaDiff.ts"

/**
 * Codex: both `codex app-server generate-json-schema --experimental` outputs (the pinned binary's
 * and the newest one's), compared for the methods the adapter decodes or answers — the lists the
 * conformance test walks (`CodexNotifications.ts`, `CodexServerRequests.ts`), the requests Planbridge
 * sends, their results, and the answers it gives.
 */

/** The requests Planbridge sends (`CodexAdapter.ts`, `CodexAuthProbe.ts`), whose params and results it relies on. */
const CLIENT_METHODS = [
  "initialize",
  "thread/start",
  "thread/resume",
  "turn/start",
  "turn/interrupt",
  "account/read",
  "config/read"
] as const

/** The result and answer files of those requests and of the server requests Planbridge answers. */
const RESULT_FILES = [
  "v1/InitializeResponse.json",
  "v2/ThreadStartResponse.json",
  "v2/ThreadResumeResponse.json",
  "v2/TurnStartResponse.json",
  "v2/TurnInterruptResponse.json",
  "v2/GetAccountResponse.json",
  "v2/ConfigReadResponse.json",
  "ToolRequestUserInputResponse.json",
  "CommandExecutionRequestApprovalResponse.json",
  "FileChangeRequestApprovalResponse.json"
] as const

const Branch = Schema.Struct({
  properties: Schema.Struct({
    method: Schema.Struct({ enum: Schema.Array(Schema.String) }),
    params: Schema.optionalKey(Schema.Json)
  })
})
const MethodUnion = Schema.Struct({ oneOf: Schema.Array(Branch) })

/** Method → the schema of its params (usually a `$ref`; `null` without params), for a `oneOf` message union file. */
const methodParams = (doc: SchemaDoc): Map<string, Json> =>
  new Map(
    Schema.decodeUnknownSync(MethodUnion)(doc.root).oneOf.map(
      (b) => [b.properties.method.enum[0] ?? "", b.properties.params ?? null] as const
    )
  )

const generate = async (codexJs: string, out: string): Promise<void> => {
  await promisify(execFile)(process.execPath, [
    codexJs,
    "app-server",
    "generate-json-schema",
    "--experimental",
    "--out",
    out
  ])
}

/** Reads a file of both generations, or undefined on the newest side when it is gone. */
const both = async (pinnedDir: string, newestDir: string, file: string) => {
  const pinned = await readSchemaDoc(join(pinnedDir, file))
  const newest = await readSchemaDoc(join(newestDir, file)).catch(() => undefined)
  return { pinned, newest }
}

/** The definitions `methods` use in one union file, compared. */
const unionSurfaces = async (
  pinnedDir: string,
  newestDir: string,
  file: string,
  direction: string,
  methods: ReadonlyArray<string>
): Promise<{ readonly surfaces: Array<Surface>; readonly added: Array<string>; readonly all: Array<string> }> => {
  const { pinned, newest } = await both(pinnedDir, newestDir, file)
  const before = methodParams(pinned)
  const after = newest !== undefined ? methodParams(newest) : new Map<string, Json>()
  const surfaces = methods.map((method): Surface => {
    const label = `${direction} ${method}`
    const params = after.get(method)
    if (newest === undefined || params === undefined)
      return { label, result: { status: "missing", what: `${method} (${file})` } }
    return { label, result: diffSurface(pinned, before.get(method) ?? null, newest, params, `${method} params`) }
  })
  return {
    surfaces,
    added: [...after.keys()].filter((m) => !before.has(m)),
    all: [...after.keys()]
  }
}

export const codexDrift = async (
  pinnedModules: string,
  newestModules: string,
  scratch: string
): Promise<ProviderReport> => {
  const pinnedDir = join(scratch, "codex-schema-pinned")
  const newestDir = join(scratch, "codex-schema-newest")
  const codexJs = (modules: string) => join(modules, "@openai/codex", "bin", "codex.js")
  await generate(codexJs(pinnedModules), pinnedDir)
  await generate(codexJs(newestModules), newestDir)

  const notifications = await unionSurfaces(
    pinnedDir,
    newestDir,
    "ServerNotification.json",
    "s2c",
    DecodedNotificationMethods
  )
  const requests = await unionSurfaces(pinnedDir, newestDir, "ServerRequest.json", "s2c", DecodedServerRequestMethods)
  const client = await unionSurfaces(pinnedDir, newestDir, "ClientRequest.json", "c2s", CLIENT_METHODS)
  const results: Array<Surface> = []
  for (const file of RESULT_FILES) {
    const { pinned, newest } = await both(pinnedDir, newestDir, file)
    results.push({
      label: `result ${file}`,
      result: diffSurface(pinned, pinned.root, newest ?? pinned, newest?.root, file)
    })
  }
  const answered = new Set<string>(DecodedServerRequestMethods)
  const refusedToday = requests.all.filter((m) => !answered.has(m) && !requests.added.includes(m))
  return {
    name: "@openai/codex",
    pinned: (await readPackageJson(pinnedModules, "@openai/codex"))?.version ?? "?",
    newest: (await readPackageJson(newestModules, "@openai/codex"))?.version ?? "?",
    surfaces: [...notifications.surfaces, ...requests.surfaces, ...client.surfaces, ...results],
    refusedNew: requests.added.filter((m) => !answered.has(m)),
    notes: [
      `server requests refused already (pinned and newest): ${refusedToday.join(", ")}`,
      ...(client.added.length > 0 ? [`client methods added: ${client.added.join(", ")}`] : [])
    ]
  }
}

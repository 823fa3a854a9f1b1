import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { main } from "../../src/cli/main.ts"
import { protocolJsonSchema, ROOT_DEFINITIONS } from "../../src/cli/schema.ts"

/**
 * `planbridge schema` is what client authors feed to code generators, so the document must be
 * valid JSON Schema that names the three roots and accepts the frames the server really sends.
 * The frames are PROTOCOL.md's examples (themselves checked against the Effect Schemas by
 * packages/contracts/test/protocol-doc.test.ts), validated here with a small draft 2020-12
 * validator covering exactly the keywords the generator emits; an unknown keyword fails the
 * test instead of being skipped, so the check cannot silently become vacuous.
 */
const started = Date.now()
const scratch = mkdtempSync(join(tmpdir(), "planbridge-schema-"))
afterAll(() => {
  rmSync(scratch, { recursive: true, force: true })
  console.info(`schema.test.ts wall time: ${Date.now() - started} ms`)
})

type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }
type JsonObject = { readonly [key: string]: Json }

const isObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const ANNOTATIONS = new Set(["$schema", "$id", "$defs", "title", "description"])
const KEYWORDS = new Set([
  "$ref",
  "anyOf",
  "type",
  "enum",
  "properties",
  "required",
  "additionalProperties",
  "items",
  "prefixItems",
  "minItems",
  "minLength",
  "maxLength",
  "pattern",
  "minimum",
  "maximum"
])

const typeMatches = (type: string, value: Json): boolean => {
  switch (type) {
    case "null":
      return value === null
    case "boolean":
      return typeof value === "boolean"
    case "string":
      return typeof value === "string"
    case "number":
      return typeof value === "number"
    case "integer":
      return typeof value === "number" && Number.isInteger(value)
    case "array":
      return Array.isArray(value)
    case "object":
      return isObject(value)
    default:
      throw new Error(`unknown JSON Schema type '${type}'`)
  }
}

/** The errors of `value` against `schema` (empty when it is valid). */
const validate = (defs: JsonObject, schema: Json, value: Json, path: string): ReadonlyArray<string> => {
  if (schema === true) return []
  if (schema === false) return [`${path}: nothing is allowed here`]
  if (!isObject(schema)) throw new Error(`${path}: a schema must be an object or a boolean`)
  const unknown = Object.keys(schema).filter((k) => !KEYWORDS.has(k) && !ANNOTATIONS.has(k))
  if (unknown.length > 0) throw new Error(`${path}: keywords this validator does not implement: ${unknown.join(", ")}`)
  const errors: Array<string> = []
  const s = schema as Record<string, Json | undefined>
  if (typeof s.$ref === "string") {
    const name = /^#\/\$defs\/(.+)$/.exec(s.$ref)?.[1]
    const target = name === undefined ? undefined : defs[name]
    if (target === undefined) throw new Error(`${path}: unresolvable $ref ${s.$ref}`)
    errors.push(...validate(defs, target, value, path))
  }
  if (Array.isArray(s.anyOf) && !s.anyOf.some((branch) => validate(defs, branch, value, path).length === 0)) {
    errors.push(`${path}: matches none of the ${s.anyOf.length} alternatives`)
  }
  if (s.type !== undefined) {
    const types = Array.isArray(s.type) ? s.type : [s.type]
    if (!types.some((t) => typeMatches(String(t), value))) errors.push(`${path}: expected ${types.join(" | ")}`)
  }
  if (Array.isArray(s.enum) && !s.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))) {
    errors.push(`${path}: expected one of ${JSON.stringify(s.enum)}, got ${JSON.stringify(value)}`)
  }
  if (typeof value === "string") {
    const length = [...value].length
    if (typeof s.minLength === "number" && length < s.minLength) errors.push(`${path}: shorter than ${s.minLength}`)
    if (typeof s.maxLength === "number" && length > s.maxLength) errors.push(`${path}: longer than ${s.maxLength}`)
    if (typeof s.pattern === "string" && !new RegExp(s.pattern, "u").test(value as string))
      errors.push(`${path}: does not match ${s.pattern}`)
  }
  if (typeof value === "number") {
    if (typeof s.minimum === "number" && value < s.minimum) errors.push(`${path}: below ${s.minimum}`)
    if (typeof s.maximum === "number" && value > s.maximum) errors.push(`${path}: above ${s.maximum}`)
  }
  if (Array.isArray(value)) {
    const prefix = Array.isArray(s.prefixItems) ? s.prefixItems : []
    if (typeof s.minItems === "number" && value.length < s.minItems)
      errors.push(`${path}: fewer than ${s.minItems} items`)
    value.forEach((item, i) => {
      const itemSchema = i < prefix.length ? prefix[i] : s.items
      if (itemSchema !== undefined) errors.push(...validate(defs, itemSchema, item, `${path}[${i}]`))
    })
  }
  if (isObject(value)) {
    const properties = isObject(s.properties) ? s.properties : {}
    for (const key of Array.isArray(s.required) ? s.required : []) {
      if (!(String(key) in value)) errors.push(`${path}: missing required key '${String(key)}'`)
    }
    for (const [key, child] of Object.entries(value)) {
      const propertySchema = properties[key]
      if (propertySchema !== undefined) errors.push(...validate(defs, propertySchema, child, `${path}.${key}`))
      else if (s.additionalProperties !== undefined)
        errors.push(...validate(defs, s.additionalProperties, child, `${path}.${key}`))
    }
  }
  return errors
}

/** The `<!-- Schema -->`-labelled json examples of PROTOCOL.md. */
const protocolExamples = (): ReadonlyArray<{
  readonly schema: string
  readonly line: number
  readonly value: Json
}> => {
  const text = readFileSync(new URL("../../../../PROTOCOL.md", import.meta.url), "utf8")
  return [...text.matchAll(/^<!--\s*(\w+)\s*-->\n```json\n([\s\S]*?)\n```$/gm)].map((m) => ({
    schema: m[1]!,
    line: text.slice(0, m.index).split("\n").length + 1,
    value: JSON.parse(m[2]!) as Json
  }))
}

/** `planbridge schema …` through the CLI entry point, with its stdout captured. */
const captured = async (args: ReadonlyArray<string>): Promise<{ readonly code: number; readonly out: string }> => {
  let out = ""
  const code = await main(["schema", ...args], {
    out: (text) => {
      out += text
    },
    err: (text) => process.stderr.write(text),
    columns: () => undefined,
    colors: () => false
  })
  return { code, out }
}

describe("planbridge schema", () => {
  const document = protocolJsonSchema()
  const defs = document.$defs as JsonObject
  const against = (name: string, value: Json) => validate(defs, { $ref: `#/$defs/${name}` }, value, name)

  it("prints one draft 2020-12 document whose $defs name ClientFrame, ServerFrame and RuntimeEvent", async () => {
    const { code, out } = await captured([])
    expect(code).toBe(0)
    const printed = JSON.parse(out) as JsonObject
    expect(printed).toEqual(JSON.parse(JSON.stringify(document)))
    expect(printed.$schema).toBe("https://json-schema.org/draft/2020-12/schema")
    const printedDefs = printed.$defs as JsonObject
    for (const name of ROOT_DEFINITIONS) expect(printedDefs[name], `$defs.${name}`).toBeDefined()
    expect(printed.anyOf).toEqual(ROOT_DEFINITIONS.map((name) => ({ $ref: `#/$defs/${name}` })))
    // Shared parts are definitions of their own, not copies: event frames point at RuntimeEvent.
    const eventFrame = printedDefs.EventFrame as { properties: JsonObject } | undefined
    expect(eventFrame?.properties.event).toEqual({ $ref: "#/$defs/RuntimeEvent" })
    for (const name of ["Command", "ThreadSnapshot", "UserInputPrompt", "ErrorCode", "ProviderCapabilities"]) {
      expect(printedDefs[name], `$defs.${name}`).toBeDefined()
    }
  })

  it("every $ref resolves and every keyword is one the validator here implements", () => {
    const problems: Array<string> = []
    const walk = (schema: Json, path: string): void => {
      if (typeof schema === "boolean") return
      if (!isObject(schema)) return void problems.push(`${path}: not a schema`)
      for (const key of Object.keys(schema))
        if (!KEYWORDS.has(key) && !ANNOTATIONS.has(key)) problems.push(`${path}: keyword ${key}`)
      if (typeof schema.$ref === "string" && defs[schema.$ref.replace(/^#\/\$defs\//, "")] === undefined)
        problems.push(`${path}: $ref ${schema.$ref}`)
      if (isObject(schema.properties))
        for (const [key, child] of Object.entries(schema.properties)) walk(child, `${path}.properties.${key}`)
      for (const key of ["anyOf", "prefixItems"] as const) {
        const list = schema[key]
        if (Array.isArray(list)) list.forEach((child, i) => walk(child, `${path}.${key}[${i}]`))
      }
      for (const key of ["items", "additionalProperties"] as const)
        if (schema[key] !== undefined) walk(schema[key], `${path}.${key}`)
    }
    for (const [name, schema] of Object.entries(defs)) walk(schema, `$defs.${name}`)
    expect(problems).toEqual([])
  })

  it("the hello frame's required keys are required", () => {
    expect(against("ClientFrame", { type: "hello", protocolVersion: 1 })).toEqual([])
    expect(against("ClientFrame", { type: "hello" }).length).toBeGreaterThan(0)
    expect(against("ClientFrame", { type: "hello", protocolVersion: 1.5 }).length).toBeGreaterThan(0)
    const hello = defs.ClientFrame as { anyOf: ReadonlyArray<Json> }
    const helloBranch = hello.anyOf
      .map((b) => (isObject(b) && typeof b.$ref === "string" ? defs[b.$ref.replace("#/$defs/", "")] : b))
      .find(
        (b) =>
          isObject(b) &&
          isObject(b.properties) &&
          JSON.stringify(b.properties.type) === JSON.stringify({ type: "string", enum: ["hello"] })
      ) as { required: ReadonlyArray<string> } | undefined
    expect(helloBranch?.required).toEqual(["type", "protocolVersion"])
  })

  it("rejects what the server rejects: unknown command types, unknown error codes, a negative afterSeq", () => {
    expect(
      against("ClientFrame", { type: "command", id: "c-1", command: { type: "thread.delete", threadId: "t" } }).length
    ).toBeGreaterThan(0)
    expect(
      against("ServerFrame", { type: "error", id: null, error: { code: "teapot", message: "no" } }).length
    ).toBeGreaterThan(0)
    expect(
      against("ClientFrame", {
        type: "command",
        id: "c-1",
        command: { type: "thread.subscribe", threadId: "t", afterSeq: -1 }
      }).length
    ).toBeGreaterThan(0)
  })

  it("accepts every frame and snapshot example of PROTOCOL.md", () => {
    const examples = protocolExamples().filter(
      (e) => e.schema === "ClientFrame" || e.schema === "ServerFrame" || e.schema === "ThreadSnapshot"
    )
    expect(examples.length).toBeGreaterThan(30)
    const failures = examples.flatMap((e) =>
      against(e.schema, e.value).map((error) => `PROTOCOL.md line ${e.line} (${e.schema}): ${error}`)
    )
    expect(failures).toEqual([])
    // The event examples are RuntimeEvents on their own, too.
    const events = examples.flatMap((e) =>
      e.schema === "ServerFrame" && isObject(e.value) && e.value.type === "event" ? [e.value.event!] : []
    )
    expect(events.length).toBeGreaterThan(0)
    for (const event of events) expect(against("RuntimeEvent", event)).toEqual([])
  })

  it("through the CLI entry point: --out writes the same document; a stray argument is a usage error", async () => {
    const file = join(scratch, "planbridge.schema.json")
    expect(await main(["schema", "--out", file])).toBe(0)
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual(JSON.parse(JSON.stringify(document)))
    expect(await main(["schema", "extra"])).toBe(2)
    expect(await main(["schema", "--bogus"])).toBe(2)
  })
})

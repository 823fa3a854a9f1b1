import type { Schema } from "effect"

/**
 * The drift gate's JSON-Schema comparison, pure: given the pinned and the newest schema of one
 * provider and a surface Planbridge decodes (a definition, or a whole schema file), which of the
 * definitions that surface reaches changed, and how (properties added / removed / changed,
 * `required` and `enum` moves). Descriptions and titles are ignored: prose is not wire.
 */

export type Json = Schema.Json

/** A schema file: its root and its definitions (`definitions` for Codex, `$defs` for ACP). */
export interface SchemaDoc {
  readonly root: Json
  readonly defs: Readonly<Record<string, Json>>
}

/** One definition reached from a surface that differs between the two versions. */
export interface DefinitionChange {
  readonly definition: string
  /** What changed, in short: `+field`, `-field`, `~field`, `required +field`, `enum +value`. */
  readonly fields: ReadonlyArray<string>
}

export type SurfaceResult =
  | { readonly status: "unchanged" }
  | { readonly status: "missing"; readonly what: string }
  | { readonly status: "changed"; readonly changes: ReadonlyArray<DefinitionChange> }

export const isObject = (value: Json | undefined): value is { readonly [key: string]: Json } =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** The schema with its prose removed, so only the wire shape is compared. */
const shape = (value: Json): Json => {
  if (Array.isArray(value)) return value.map(shape)
  if (!isObject(value)) return value
  const out: Record<string, Json> = {}
  for (const key of Object.keys(value).sort()) {
    if (key === "description" || key === "title") continue
    const v = value[key]
    if (v !== undefined) out[key] = shape(v)
  }
  return out
}
const same = (a: Json | undefined, b: Json | undefined): boolean =>
  JSON.stringify(a === undefined ? null : shape(a)) === JSON.stringify(b === undefined ? null : shape(b))

/** `#/definitions/X` and `#/$defs/X` both name X. */
const refName = (ref: string): string => ref.slice(ref.lastIndexOf("/") + 1)

/** Every definition name `value` refers to, directly. */
const refsOf = (value: Json, into: Set<string>): Set<string> => {
  if (Array.isArray(value)) for (const v of value) refsOf(v, into)
  else if (isObject(value))
    for (const [key, v] of Object.entries(value)) {
      if (key === "$ref" && typeof v === "string") into.add(refName(v))
      else refsOf(v, into)
    }
  return into
}

/** The definitions reachable from `start` (the surface's own definitions and everything they use). */
const closure = (doc: SchemaDoc, start: Json): Set<string> => {
  const seen = new Set<string>()
  const queue = [...refsOf(start, new Set())]
  for (let name = queue.pop(); name !== undefined; name = queue.pop()) {
    if (seen.has(name)) continue
    seen.add(name)
    const def = doc.defs[name]
    if (def !== undefined) queue.push(...refsOf(def, new Set()))
  }
  return seen
}

const stringsOf = (value: Json | undefined): ReadonlyArray<string> =>
  Array.isArray(value) ? value.flatMap((v) => (typeof v === "string" ? [v] : [])) : []
const moved = (label: string, before: ReadonlyArray<string>, after: ReadonlyArray<string>): Array<string> => [
  ...after.filter((v) => !before.includes(v)).map((v) => `${label}+${v}`),
  ...before.filter((v) => !after.includes(v)).map((v) => `${label}-${v}`)
]

/** A union branch's name: its title, or the single value of a discriminating property, or its `$ref`, or its index. */
const variantKey = (variant: Json, index: number): string => {
  if (!isObject(variant)) return `#${index}`
  if (typeof variant.title === "string") return variant.title
  if (typeof variant.$ref === "string") return refName(variant.$ref)
  const properties = isObject(variant.properties) ? variant.properties : {}
  for (const [name, property] of Object.entries(properties)) {
    const values = isObject(property) ? stringsOf(property.enum) : []
    if (values.length === 1) return `${name}=${values[0]}`
  }
  return `#${index}`
}

/** How the branches of a `oneOf` / `anyOf` moved: `+key`, `-key`, `~key(what changed)`. */
const describeVariants = (keyword: string, before: Json, after: Json): Array<string> => {
  const b = new Map(Array.isArray(before) ? before.map((v: Json, i: number) => [variantKey(v, i), v] as const) : [])
  const a = new Map(Array.isArray(after) ? after.map((v: Json, i: number) => [variantKey(v, i), v] as const) : [])
  const out: Array<string> = []
  for (const key of a.keys()) if (!b.has(key)) out.push(`${keyword} +${key}`)
  for (const key of b.keys()) if (!a.has(key)) out.push(`${keyword} -${key}`)
  for (const [key, v] of b) {
    const w = a.get(key)
    if (w !== undefined && !same(v, w)) out.push(`${keyword} ~${key}(${describeChange(v, w).join(", ")})`)
  }
  return out
}

/** How one definition changed, by field where it is an object schema, by branch where it is a union. */
export const describeChange = (before: Json, after: Json): ReadonlyArray<string> => {
  if (!isObject(before) || !isObject(after)) return ["changed"]
  const fields: Array<string> = []
  const pb = isObject(before.properties) ? before.properties : {}
  const pa = isObject(after.properties) ? after.properties : {}
  for (const key of Object.keys(pa)) if (!(key in pb)) fields.push(`+${key}`)
  for (const key of Object.keys(pb)) if (!(key in pa)) fields.push(`-${key}`)
  for (const key of Object.keys(pb)) if (key in pa && !same(pb[key], pa[key])) fields.push(`~${key}`)
  fields.push(...moved("required ", stringsOf(before.required), stringsOf(after.required)))
  fields.push(...moved("enum ", stringsOf(before.enum), stringsOf(after.enum)))
  // Every other keyword (type, oneOf, items, …) by name; unions by branch.
  const handled = new Set(["properties", "required", "enum", "description", "title"])
  const keywords = new Set([...Object.keys(before), ...Object.keys(after)].filter((k) => !handled.has(k)))
  for (const k of keywords) {
    const kb = before[k]
    const ka = after[k]
    if (kb === undefined) fields.push(`keyword +${k}`)
    else if (ka === undefined) fields.push(`keyword -${k}`)
    else if ((k === "oneOf" || k === "anyOf") && !same(kb, ka)) fields.push(...describeVariants(k, kb, ka))
    else if (!same(kb, ka)) fields.push(`keyword ~${k}`)
  }
  return fields.length > 0 ? fields : ["changed"]
}

/**
 * Compares one surface: `start` is where it begins in each version (a definition's schema, or a
 * file's root); `undefined` on the newest side means the surface is gone.
 */
export const diffSurface = (
  pinned: SchemaDoc,
  pinnedStart: Json,
  newest: SchemaDoc,
  newestStart: Json | undefined,
  what: string
): SurfaceResult => {
  if (newestStart === undefined) return { status: "missing", what }
  const changes: Array<DefinitionChange> = []
  // The surface's own top level (a definition's body, or a file's root outside its definitions).
  const top = (value: Json): Json =>
    isObject(value)
      ? Object.fromEntries(Object.entries(value).filter(([k]) => k !== "definitions" && k !== "$defs"))
      : value
  if (!same(top(pinnedStart), top(newestStart)))
    changes.push({ definition: what, fields: describeChange(top(pinnedStart), top(newestStart)) })
  const names = new Set([...closure(pinned, pinnedStart), ...closure(newest, newestStart)])
  for (const name of [...names].sort()) {
    const before = pinned.defs[name]
    const after = newest.defs[name]
    if (before === undefined || after === undefined) {
      // A definition only one side has shows up as a change of its user; name it as well.
      changes.push({ definition: name, fields: [before === undefined ? "new definition" : "definition removed"] })
    } else if (!same(before, after)) {
      changes.push({ definition: name, fields: describeChange(before, after) })
    }
  }
  return changes.length === 0 ? { status: "unchanged" } : { status: "changed", changes }
}

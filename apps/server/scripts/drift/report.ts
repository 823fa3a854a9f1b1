import { readFile } from "node:fs/promises"
import { join } from "node:path"
import { Schema } from "effect"
import type { SchemaDoc, SurfaceResult } from "./schemaDiff.ts"

/** What the drift gate found for one provider package, and how it is printed. */

export interface Surface {
  /** e.g. `s2c item/completed` (server to client), `c2s turn/start`, `type AskUserQuestionInput`. */
  readonly label: string
  readonly result: SurfaceResult
}

export interface ProviderReport {
  readonly name: string
  readonly pinned: string
  readonly newest: string
  readonly surfaces: ReadonlyArray<Surface>
  /** Requests the newest version can send to Planbridge that the pinned one could not, and Planbridge refuses. */
  readonly refusedNew: ReadonlyArray<string>
  readonly notes: ReadonlyArray<string>
}

/** Whether the gate fails: a decoded surface changed or disappeared. */
export const drifted = (reports: ReadonlyArray<ProviderReport>): boolean =>
  reports.some((r) => r.surfaces.some((s) => s.result.status !== "unchanged"))

export const formatReport = (reports: ReadonlyArray<ProviderReport>): string => {
  const lines: Array<string> = []
  for (const r of reports) {
    const version = r.pinned === r.newest ? `${r.pinned} (newest)` : `${r.pinned} → ${r.newest}`
    lines.push(`${r.name} ${version}`)
    const unchanged = r.surfaces.filter((s) => s.result.status === "unchanged").length
    if (r.surfaces.length > 0) lines.push(`  unchanged: ${unchanged} of ${r.surfaces.length} decoded surfaces`)
    // A definition many surfaces share (Codex's ThreadItem) is printed once, with who reaches it.
    const changed = new Map<string, Array<string>>()
    for (const s of r.surfaces) {
      if (s.result.status === "missing") lines.push(`  GONE ${s.label}: ${s.result.what} not in the newest version`)
      if (s.result.status === "changed")
        for (const c of s.result.changes) {
          const line = `${c.definition}: ${c.fields.join(", ")}`
          changed.set(line, [...(changed.get(line) ?? []), s.label])
        }
    }
    if (changed.size > 0) {
      const surfaces = r.surfaces.filter((s) => s.result.status === "changed").map((s) => s.label)
      lines.push(`  CHANGED ${surfaces.length}: ${surfaces.join(", ")}`)
    }
    for (const [line, via] of changed) {
      const shown = via.length > 3 ? `${via.slice(0, 3).join(", ")} +${via.length - 3} more` : via.join(", ")
      lines.push(`    ${line}  [${shown}]`)
    }
    if (r.refusedNew.length > 0) lines.push(`  new requests Planbridge would refuse: ${r.refusedNew.join(", ")}`)
    for (const note of r.notes) lines.push(`  note: ${note}`)
  }
  lines.push(drifted(reports) ? "drift: a decoded surface changed (exit 1)" : "drift: no decoded surface changed")
  return lines.join("\n")
}

const SchemaFile = Schema.Struct({
  definitions: Schema.optionalKey(Schema.Record(Schema.String, Schema.Json)),
  $defs: Schema.optionalKey(Schema.Record(Schema.String, Schema.Json))
})

/** A JSON Schema file as the diff reads it: its root and its definitions (either spelling). */
export const readSchemaDoc = async (path: string): Promise<SchemaDoc> => {
  const root = Schema.decodeUnknownSync(Schema.fromJsonString(Schema.Json))(await readFile(path, "utf8"))
  const file = Schema.decodeUnknownSync(SchemaFile)(root)
  return { root, defs: file.definitions ?? file.$defs ?? {} }
}

const PackageJson = Schema.Struct({
  version: Schema.String,
  dependencies: Schema.optionalKey(Schema.Record(Schema.String, Schema.String))
})
export type PackageJson = typeof PackageJson.Type

/** The package.json of `name` as installed under `nodeModules`, or undefined when it is not. */
export const readPackageJson = async (nodeModules: string, name: string): Promise<PackageJson | undefined> => {
  try {
    const text = await readFile(join(nodeModules, name, "package.json"), "utf8")
    return Schema.decodeUnknownSync(Schema.fromJsonString(PackageJson))(text)
  } catch {
    return undefined
  }
}

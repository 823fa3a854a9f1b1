import { Arbitrary, Effect, Schema } from "effect"
import { describe, expect, it, vi } from "vitest"
import { RuntimeEvent, RuntimeEventMembers, decodeRuntimeEventSync } from "@planbridge/contracts"
import "../../src/orchestration/CompiledEventDecoding.ts"

type Json = null | boolean | number | string | Array<Json> | { [key: string]: Json }

/** Every path to a value inside a JSON value (object keys and array indices), the root excluded. */
const pathsOf = (value: Json, prefix: ReadonlyArray<string | number> = []): Array<Array<string | number>> => {
  if (value === null || typeof value !== "object") return []
  const entries: Array<[string | number, Json]> = Array.isArray(value)
    ? value.map((v, i) => [i, v])
    : Object.entries(value)
  return entries.flatMap(([key, child]) => [[...prefix, key], ...pathsOf(child, [...prefix, key])])
}

/** A copy of `value` with the value at `path` replaced (`undefined`: removed). */
const withAt = (value: Json, path: ReadonlyArray<string | number>, replacement: Json | undefined): Json => {
  const copy = structuredClone(value)
  let parent = copy as Record<string | number, Json>
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, Json>
  const last = path[path.length - 1]!
  if (replacement !== undefined) parent[last] = replacement
  else if (Array.isArray(parent)) parent.splice(last as number, 1)
  else delete parent[last]
  return copy
}

/** Ways to corrupt one value: wrong types, empty and over-long strings, a bad timestamp, a foreign key. */
const corruptions = (value: Json): Array<Json | undefined> => [
  undefined,
  null,
  42,
  "",
  "x".repeat(513),
  "2026-11-30 12:00",
  true,
  [],
  {},
  typeof value === "object" && value !== null && !Array.isArray(value) ? { ...value, unexpected: 1 } : "other"
]

describe("compiled RuntimeEvent decoding (Effect's JIT, CompiledEventDecoding.ts)", () => {
  it("accepts, rejects, outputs and reports exactly as the interpreted Schema on valid and corrupted events", async () => {
    // The same Schema evaluated again has its own AST objects, which nothing has compiled: the interpreter.
    vi.resetModules()
    const fresh = await import("@planbridge/contracts")
    expect(fresh.RuntimeEvent.ast).not.toBe(RuntimeEvent.ast)
    const union = Schema.decodeUnknownSync(fresh.RuntimeEvent)
    const typeOnly = Schema.decodeUnknownSync(Schema.Struct({ type: Schema.Literals(fresh.RuntimeEventTypes) }))
    // decode.ts's reporting (an unknown type named on its own), over the interpreted Schema.
    const interpreted = (input: unknown) => {
      try {
        return union(input)
      } catch (error) {
        typeOnly(input)
        throw error
      }
    }
    const outcome = (decode: (input: unknown) => unknown, input: unknown) => {
      try {
        return { ok: true, value: decode(input) }
      } catch (error) {
        return { ok: false, message: String(error) }
      }
    }

    let valid = 0
    let rejected = 0
    for (const member of RuntimeEventMembers) {
      const samples = await Effect.runPromise(Arbitrary.sampleEffect(Arbitrary.schema(member), { count: 8 }))
      for (const sample of samples) {
        const wire = JSON.parse(JSON.stringify(Schema.encodeSync(member)(sample))) as Json
        const inputs: Array<unknown> = [wire]
        for (const path of pathsOf(wire).slice(0, 40)) {
          let at: Json = wire
          for (const key of path) at = (at as Record<string | number, Json>)[key]!
          for (const replacement of corruptions(at)) inputs.push(withAt(wire, path, replacement))
        }
        for (const input of inputs) {
          const compiled = outcome(decodeRuntimeEventSync, input)
          const reference = outcome(interpreted, input)
          expect(compiled).toStrictEqual(reference)
          if (compiled.ok) valid++
          else rejected++
        }
      }
    }
    expect(valid).toBeGreaterThan(RuntimeEventMembers.length * 8)
    expect(rejected).toBeGreaterThan(1000)
  })
})

import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { RuntimeEventTypes, decodeRuntimeEventSync, encodeRuntimeEventSync } from "../src/index.ts"
import { canonicalJson, section as sharedSection } from "./support/markdown.ts"

/**
 * EVENTS.md is the catalogue people read instead of the schemas, so its examples must be
 * events the contracts accept as they are: a drifted example is a documentation bug that
 * nothing else would catch.
 */
const markdown = readFileSync(new URL("../../../EVENTS.md", import.meta.url), "utf8")

interface JsonBlock {
  readonly heading: string
  readonly line: number
  readonly text: string
}

/** Fenced ```json blocks with the nearest heading above each (headings inside fences do not count). */
const jsonBlocks = (source: string): ReadonlyArray<JsonBlock> => {
  const blocks: Array<JsonBlock> = []
  const lines = source.split("\n")
  let heading = "(before the first heading)"
  let fence: { readonly json: boolean; readonly start: number; readonly body: Array<string> } | undefined
  for (const [index, line] of lines.entries()) {
    if (fence === undefined) {
      const opening = /^```\s*(\S*)/.exec(line)
      if (opening !== null) {
        fence = { json: opening[1] === "json", start: index + 1, body: [] }
      } else if (/^#{1,6}\s/.test(line)) {
        heading = line.replace(/^#+\s*/, "").trim()
      }
    } else if (/^```\s*$/.test(line)) {
      if (fence.json) blocks.push({ heading, line: fence.start, text: fence.body.join("\n") })
      fence = undefined
    } else {
      fence.body.push(line)
    }
  }
  if (fence !== undefined) throw new Error(`EVENTS.md: unclosed code fence opened at line ${fence.start}`)
  return blocks
}

const section = (source: string, title: string): string =>
  sharedSection("EVENTS.md", source, title, (heading) => heading.startsWith(title))

const blocks = jsonBlocks(markdown)
const where = (block: JsonBlock) => `EVENTS.md, "${block.heading}" (json block at line ${block.line})`

interface ParsedBlock {
  readonly block: JsonBlock
  readonly value: unknown
}

const parseBlock = (block: JsonBlock): ParsedBlock => {
  try {
    return { block, value: JSON.parse(block.text) as unknown }
  } catch (error) {
    throw new Error(`${where(block)} is not valid JSON: ${String(error)}`)
  }
}

const decodeBlock = ({ block, value }: ParsedBlock) => {
  try {
    return decodeRuntimeEventSync(value)
  } catch (error) {
    throw new Error(`${where(block)} does not decode as a RuntimeEvent:\n${String(error)}`)
  }
}

/** For the whole-document checks: blocks that fail are reported by their own test, not again here. */
const tryDecode = (block: JsonBlock) => {
  try {
    return decodeRuntimeEventSync(JSON.parse(block.text))
  } catch {
    return undefined
  }
}

describe("EVENTS.md", () => {
  it("has json examples", () => {
    expect(blocks.length).toBeGreaterThanOrEqual(RuntimeEventTypes.length)
  })

  const cases = blocks.map((block) => [`${block.heading} (line ${block.line})`, block] as const)

  describe.each(cases)("example %s", (_title, block) => {
    it("is valid JSON", () => {
      parseBlock(block)
    })

    it("decodes with the contracts as they are", () => {
      decodeBlock(parseBlock(block))
    })

    it("carries no field the contracts do not know (decode → encode gives the block back)", () => {
      // Schema structs ignore unknown keys when decoding, so a misspelt optional field would
      // otherwise pass silently.
      const parsed = parseBlock(block)
      const reencoded = encodeRuntimeEventSync(decodeBlock(parsed))
      expect(canonicalJson(reencoded), `${where(block)} has keys the contracts drop`).toBe(canonicalJson(parsed.value))
    })

    it("sits under the heading of its own event type", () => {
      const event = decodeBlock(parseBlock(block))
      const named = RuntimeEventTypes.filter((type) => block.heading.includes(`\`${type}\``))
      expect(named, `${where(block)}: the heading must name exactly one event type`).toHaveLength(1)
      expect(event.type, `${where(block)} shows another event type`).toBe(named[0])
    })
  })

  it("every event type has at least one example", () => {
    const shown = new Set(blocks.map((block) => tryDecode(block)?.type))
    const missing = RuntimeEventTypes.filter((type) => !shown.has(type))
    expect(missing, "event types without a decodable example in EVENTS.md").toEqual([])
  })

  it("example event ids are unique (EventId is globally unique)", () => {
    const ids = blocks.flatMap((block) => tryDecode(block)?.eventId ?? [])
    const duplicates = ids.filter((id, index) => ids.indexOf(id) !== index)
    expect(duplicates, "duplicate eventIds in EVENTS.md examples").toEqual([])
  })

  it("the provider × event matrix has a row for every event type, with a cell per provider", () => {
    const matrix = section(markdown, "Provider × event matrix")
    const rows = matrix
      .split("\n")
      .filter((line) => line.startsWith("|"))
      .map((line) =>
        line
          .slice(1, line.trimEnd().endsWith("|") ? line.trimEnd().length - 1 : undefined)
          .split("|")
          .map((cell) => cell.trim())
      )
    const header = rows[0] ?? []
    expect(header.slice(1).join(" "), "matrix columns").toMatch(/Codex[\s\S]*Claude[\s\S]*(Cursor|ACP)/)
    const byType = new Map(rows.map((cells) => [cells[0]?.replace(/`/g, ""), cells] as const))
    for (const type of RuntimeEventTypes) {
      const row = byType.get(type)
      expect(row, `matrix row for ${type}`).toBeDefined()
      expect(row?.length, `matrix row for ${type} has a cell per provider`).toBe(header.length)
      for (const cell of row?.slice(1) ?? []) {
        expect(cell, `matrix row for ${type}: every cell says native, derived, synthesized or never`).toMatch(
          /\b(native|derived|synthesized|never)\b/
        )
      }
    }
  })
})

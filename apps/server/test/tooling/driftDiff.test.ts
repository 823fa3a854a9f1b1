import { describe, expect, it } from "vitest"
import { diffDeclaration, readDeclarations } from "../../scripts/drift/dtsDiff.ts"
import { drifted, formatReport, type ProviderReport } from "../../scripts/drift/report.ts"
import { diffSurface, type Json, type SchemaDoc } from "../../scripts/drift/schemaDiff.ts"

/**
 * The drift gate's comparison on tiny made-up schemas and declarations (the gate itself needs the
 * registry and is not part of `npm test`): a change anywhere a decoded surface reaches is named by
 * definition and field, prose and unrelated definitions are not, and the report fails on it.
 */

const doc = (defs: Record<string, Json>): SchemaDoc => ({ root: { definitions: defs }, defs })
const ref = (name: string): Json => ({ $ref: `#/definitions/${name}` })

const pinned = doc({
  TurnParams: { type: "object", properties: { turn: ref("Turn"), threadId: { type: "string" } }, required: ["turn"] },
  Turn: {
    type: "object",
    description: "A turn.",
    properties: { id: { type: "string" }, status: ref("Status") }
  },
  Status: { type: "string", enum: ["active", "completed"] },
  Item: {
    oneOf: [
      { title: "AgentMessage", properties: { text: { type: "string" } } },
      { title: "Plan", properties: { text: { type: "string" } } }
    ]
  },
  Unrelated: { type: "object", properties: { a: { type: "string" } } }
})

describe("schema surfaces", () => {
  it("is unchanged when only descriptions and unreached definitions differ", () => {
    const newest = doc({
      ...pinned.defs,
      Turn: {
        type: "object",
        description: "A turn, reworded.",
        properties: { id: { type: "string" }, status: ref("Status") }
      },
      Unrelated: { type: "object", properties: { b: { type: "number" } } }
    })
    expect(diffSurface(pinned, ref("TurnParams"), newest, ref("TurnParams"), "turn/started")).toEqual({
      status: "unchanged"
    })
  })

  it("names the reached definition and its fields when they move", () => {
    const newest = doc({
      ...pinned.defs,
      Turn: {
        type: "object",
        properties: { id: { type: "number" }, status: ref("Status"), error: { type: "string" } }
      },
      Status: { type: "string", enum: ["active", "completed", "interrupted"] },
      TurnParams: { type: "object", properties: { turn: ref("Turn") }, required: ["turn", "threadId"] }
    })
    expect(diffSurface(pinned, ref("TurnParams"), newest, ref("TurnParams"), "turn/started")).toEqual({
      status: "changed",
      changes: [
        { definition: "Status", fields: ["enum +interrupted"] },
        { definition: "Turn", fields: ["+error", "~id"] },
        { definition: "TurnParams", fields: ["-threadId", "required +threadId"] }
      ]
    })
  })

  it("names a union's branches, and a surface that is gone", () => {
    const newest = doc({
      ...pinned.defs,
      Item: {
        oneOf: [
          { title: "AgentMessage", properties: { text: { type: "string" }, display: { type: "string" } } },
          { title: "Review", properties: {} }
        ]
      }
    })
    expect(diffSurface(pinned, ref("Item"), newest, ref("Item"), "item/completed")).toEqual({
      status: "changed",
      changes: [{ definition: "Item", fields: ["oneOf +Review", "oneOf -Plan", "oneOf ~AgentMessage(+display)"] }]
    })
    expect(diffSurface(pinned, ref("Item"), newest, undefined, "item/completed")).toEqual({
      status: "missing",
      what: "item/completed"
    })
  })
})

describe("type declarations", () => {
  const before = readDeclarations(
    "before.d.ts",
    `/** Asked. */
export interface AskInput { questions: Question[]; }
interface Question { question: string; multiSelect?: boolean; }
export declare type Reason = 'skipped' | 'dismissed';
export interface Other { x: number; }`
  )
  it("is unchanged when only comments and unreached declarations differ", () => {
    const after = readDeclarations(
      "after.d.ts",
      `export interface AskInput { questions: Question[]; }
/** One question. */
interface Question { question: string; multiSelect?: boolean; }
export declare type Reason = 'skipped' | 'dismissed';
export interface Other { y: string; }`
    )
    expect(diffDeclaration(before, after, "AskInput")).toEqual({ status: "unchanged" })
  })
  it("names members and union literals that move", () => {
    const after = readDeclarations(
      "after.d.ts",
      `export interface AskInput { questions: Question[]; reason?: Reason; }
interface Question { question: string; }
export declare type Reason = 'skipped' | 'dismissed' | 'replied_in_chat';`
    )
    expect(diffDeclaration(before, after, "AskInput")).toEqual({
      status: "changed",
      changes: [
        { definition: "AskInput", fields: ["+reason"] },
        { definition: "Question", fields: ["-multiSelect"] },
        { definition: "Reason", fields: ["+'replied_in_chat'"] }
      ]
    })
    expect(diffDeclaration(before, after, "Other")).toEqual({ status: "missing", what: "Other" })
  })
})

describe("report", () => {
  const report = (surfaces: ProviderReport["surfaces"]): ProviderReport => ({
    name: "@openai/codex",
    pinned: "1.0.0",
    newest: "1.1.0",
    surfaces,
    refusedNew: ["mcpServer/elicitation/request"],
    notes: []
  })
  it("passes when every surface is unchanged, and fails on a change", () => {
    const clean = [report([{ label: "s2c turn/started", result: { status: "unchanged" } }])]
    expect(drifted(clean)).toBe(false)
    expect(formatReport(clean)).toContain("unchanged: 1 of 1 decoded surfaces")
    expect(formatReport(clean)).toContain("new requests Planbridge would refuse: mcpServer/elicitation/request")
    const moved = [
      report([
        {
          label: "s2c turn/started",
          result: { status: "changed", changes: [{ definition: "Turn", fields: ["+error"] }] }
        }
      ])
    ]
    expect(drifted(moved)).toBe(true)
    expect(formatReport(moved)).toContain("Turn: +error  [s2c turn/started]")
  })
})

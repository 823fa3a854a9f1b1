import { Schema } from "effect"
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import * as contracts from "../src/index.ts"
import {
  ClientFrame,
  Command,
  CommandTable,
  commandTypes as tableCommandTypes,
  ErrorCode,
  ErrorInfo,
  IsoDateTime,
  PromptId,
  RawNative,
  RequestId,
  ResolvedBy,
  RuntimeEvent,
  ServerFrame,
  ThreadId,
  ThreadState,
  TurnId,
  UserInputAnswerEntry,
  UserInputPrompt
} from "../src/index.ts"
import { canonicalJson, section as sharedSection } from "./support/markdown.ts"

/**
 * PROTOCOL.md is what client authors read instead of the Schemas, so every example in it must be
 * a value the contracts accept exactly as written. Each ```json block names its Schema in an HTML
 * comment on the line before the fence; a block without one is an error, because an unchecked
 * example is how documentation drifts.
 */
const markdown = readFileSync(new URL("../../../PROTOCOL.md", import.meta.url), "utf8")

// ---- the operator HTTP API's bodies ---------------------------------------------------------
// They are plain TypeScript interfaces in apps/server (OperatorQueries, OperatorRoutes), not
// contract Schemas; these mirror them from contract parts so that the HTTP examples are checked
// too. Keep them in step with `apps/server/src/persistence/OperatorQueries.ts`.

const OperatorPrompt = Schema.Struct({
  promptId: PromptId,
  threadId: ThreadId,
  turnId: Schema.NullOr(TurnId),
  provider: Schema.String,
  status: Schema.Literals(["pending", "resolved"]),
  resolution: Schema.NullOr(Schema.String),
  prompt: UserInputPrompt,
  answers: Schema.NullOr(Schema.Array(UserInputAnswerEntry)),
  reason: Schema.NullOr(Schema.String),
  createdAt: IsoDateTime,
  resolvedAt: Schema.NullOr(IsoDateTime),
  resolvedBy: Schema.NullOr(ResolvedBy)
})

/** `GET /api/resolutions`: apps/server/src/persistence/ResolutionAudit.ts's `AuditPage`. */
const OperatorResolutions = Schema.Struct({
  entries: Schema.Array(
    Schema.Struct({
      seq: Schema.Int,
      threadId: ThreadId,
      provider: Schema.String,
      at: IsoDateTime,
      target: Schema.Literals(["prompt", "request", "plan"]),
      id: Schema.String,
      resolution: Schema.String,
      resolvedBy: Schema.NullOr(ResolvedBy)
    })
  ),
  nextAfterSeq: Schema.NullOr(Schema.Int)
})

const documentOnlySchemas: Record<string, Schema.Codec<unknown, unknown>> = {
  OperatorPromptList: Schema.Struct({ prompts: Schema.Array(OperatorPrompt) }),
  OperatorPromptDetail: Schema.Struct({
    ...OperatorPrompt.fields,
    request: Schema.NullOr(
      Schema.Struct({
        requestId: RequestId,
        nativeMethod: Schema.String,
        nativeId: Schema.String,
        status: Schema.String
      })
    ),
    raw: Schema.NullOr(RawNative),
    timeline: Schema.Array(Schema.Struct({ seq: Schema.Int, threadSeq: Schema.Int, event: RuntimeEvent }))
  }),
  OperatorAnswerBody: Schema.Struct({
    answers: Schema.Array(UserInputAnswerEntry),
    clientRequestId: Schema.optionalKey(Schema.String.check(Schema.isNonEmpty()))
  }),
  OperatorResolution: Schema.Struct({
    promptId: Schema.optionalKey(PromptId),
    requestId: Schema.optionalKey(RequestId),
    planId: Schema.optionalKey(Schema.String),
    status: Schema.Literal("resolved")
  }),
  OperatorError: Schema.Struct({ error: ErrorInfo }),
  OperatorResolutions
}

/** A contract export by name, else a document-only HTTP shape. */
const schemaNamed = (name: string): Schema.Codec<unknown, unknown> | undefined => {
  const exported: unknown = (contracts as Record<string, unknown>)[name]
  if (Schema.isSchema(exported)) return exported as Schema.Codec<unknown, unknown>
  return documentOnlySchemas[name]
}

// ---- reading the document ------------------------------------------------------------------

interface JsonBlock {
  readonly heading: string
  /** 1-based line of the opening fence. */
  readonly line: number
  readonly schema: string | undefined
  readonly text: string
}

/** Fenced json blocks with the nearest heading above and the `<!-- Schema -->` comment right before the fence. */
const jsonBlocks = (source: string): ReadonlyArray<JsonBlock> => {
  const blocks: Array<JsonBlock> = []
  const lines = source.split("\n")
  let heading = "(before the first heading)"
  let fence:
    | {
        readonly json: boolean
        readonly line: number
        readonly schema: string | undefined
        readonly body: Array<string>
      }
    | undefined
  for (const [index, line] of lines.entries()) {
    if (fence === undefined) {
      const opening = /^```\s*(\S*)/.exec(line)
      if (opening !== null) {
        const comment = /^<!--\s*([A-Za-z][A-Za-z0-9]*)\s*-->\s*$/.exec(lines[index - 1] ?? "")
        fence = { json: opening[1] === "json", line: index + 1, schema: comment?.[1], body: [] }
      } else if (/^#{1,6}\s/.test(line)) {
        heading = line.replace(/^#+\s*/, "").trim()
      }
    } else if (/^```\s*$/.test(line)) {
      if (fence.json) blocks.push({ heading, line: fence.line, schema: fence.schema, text: fence.body.join("\n") })
      fence = undefined
    } else {
      fence.body.push(line)
    }
  }
  if (fence !== undefined) throw new Error(`PROTOCOL.md: unclosed code fence opened at line ${fence.line}`)
  return blocks
}

const section = (source: string, title: string): string =>
  sharedSection("PROTOCOL.md", source, title, (heading) => heading === title)

const blocks = jsonBlocks(markdown)
const where = (block: JsonBlock) =>
  `PROTOCOL.md, "${block.heading}" (json block at line ${block.line}, schema ${block.schema ?? "none"})`

/** Parses, decodes with the named Schema and re-encodes; every failure names the block. */
const check = (
  block: JsonBlock
): { readonly value: unknown; readonly decoded: unknown; readonly reencoded: unknown } => {
  if (block.schema === undefined) {
    throw new Error(`${where(block)} has no schema comment: put e.g. <!-- ServerFrame --> on the line before the fence`)
  }
  const schema = schemaNamed(block.schema)
  if (schema === undefined)
    throw new Error(`${where(block)} names a schema that neither the contracts nor this test define`)
  let value: unknown
  try {
    value = JSON.parse(block.text)
  } catch (error) {
    throw new Error(`${where(block)} is not valid JSON: ${String(error)}`)
  }
  let decoded: unknown
  try {
    decoded = Schema.decodeUnknownSync(schema)(value)
  } catch (error) {
    throw new Error(`${where(block)} does not decode:\n${String(error)}`)
  }
  return { value, decoded, reencoded: Schema.encodeSync(schema)(decoded) }
}

const tryCheck = (block: JsonBlock) => {
  try {
    return check(block)
  } catch {
    return undefined
  }
}

const literalsOf = (union: {
  readonly members: ReadonlyArray<{
    readonly fields: { readonly type: { readonly schema: { readonly literal: unknown } } }
  }>
}) => union.members.map((member) => String(member.fields.type.schema.literal))

const commandTypes = literalsOf(Command)
const serverFrameTypes = literalsOf(ServerFrame)
const clientFrameTypes = literalsOf(ClientFrame)

/** The decoded frames of every block that passes, for the whole-document checks. */
const decodedOf = (schemaName: string) =>
  blocks.flatMap((block) => {
    if (block.schema !== schemaName) return []
    const checked = tryCheck(block)
    return checked === undefined ? [] : [{ block, frame: checked.decoded }]
  })

describe("PROTOCOL.md", () => {
  it("has json examples, each preceded by a schema comment", () => {
    expect(blocks.length).toBeGreaterThanOrEqual(commandTypes.length * 2 + serverFrameTypes.length)
    const unnamed = blocks.filter((block) => block.schema === undefined).map(where)
    expect(unnamed, "json blocks without a <!-- Schema --> comment on the line before the fence").toEqual([])
  })

  const cases = blocks.map(
    (block) => [`${block.heading} (line ${block.line}, ${block.schema ?? "no schema"})`, block] as const
  )

  describe.each(cases)("example %s", (_title, block) => {
    it("decodes with its schema and carries no field the schema does not know (decode → encode gives it back)", () => {
      // Structs drop unknown keys when decoding, so a misspelt optional field shows up here.
      const { value, reencoded } = check(block)
      expect(canonicalJson(reencoded), `${where(block)} has keys the schema drops or rewrites`).toBe(
        canonicalJson(value)
      )
    })
  })

  it("every command type has an example request", () => {
    const shown = new Set<string>(
      decodedOf("ClientFrame").flatMap(({ frame }) => {
        const f = frame as ClientFrame
        return f.type === "command" ? [f.command.type] : []
      })
    )
    expect(
      commandTypes.filter((type) => !shown.has(type)),
      "commands without an example command frame"
    ).toEqual([])
  })

  it("every client and server frame type has an example", () => {
    const client = new Set(decodedOf("ClientFrame").map(({ frame }) => (frame as ClientFrame).type))
    const server = new Set(decodedOf("ServerFrame").map(({ frame }) => (frame as ServerFrame).type))
    expect(
      clientFrameTypes.filter((type) => !client.has(type as ClientFrame["type"])),
      "client frame types without an example"
    ).toEqual([])
    expect(
      serverFrameTypes.filter((type) => !server.has(type as ServerFrame["type"])),
      "server frame types without an example"
    ).toEqual([])
  })

  it("each command has its own section with a request, and a result or error answering that request's id", () => {
    for (const type of commandTypes) {
      const text = section(markdown, `\`${type}\``)
      const inSection = blocks.filter((block) => text.includes(block.text))
      const requests = inSection.flatMap((block) => {
        const f = block.schema === "ClientFrame" ? (tryCheck(block)?.decoded as ClientFrame | undefined) : undefined
        return f?.type === "command" ? [f] : []
      })
      expect(
        requests.map((r) => r.command.type),
        `section \`${type}\`: its example requests`
      ).toContain(type)
      expect(
        requests.filter((r) => r.command.type !== type).map((r) => r.command.type),
        `section \`${type}\` shows other commands`
      ).toEqual([])
      const answers = inSection.flatMap((block) => {
        const f = block.schema === "ServerFrame" ? (tryCheck(block)?.decoded as ServerFrame | undefined) : undefined
        return f?.type === "result" || f?.type === "error" ? [f] : []
      })
      expect(
        answers.some((a) => a.type === "result"),
        `section \`${type}\` has an example result`
      ).toBe(true)
      const requestIds = new Set(requests.map((r) => r.id))
      expect(
        answers.some((a) => a.type === "result" && requestIds.has(a.id)),
        `section \`${type}\`: a result answers an example request's id`
      ).toBe(true)
    }
  })

  it("each command's example results decode with its success Schema in the command table, as written", () => {
    expect([...tableCommandTypes].sort(), "the command table's commands").toEqual([...commandTypes].sort())
    for (const type of tableCommandTypes) {
      const text = section(markdown, `\`${type}\``)
      const inSection = blocks.filter((block) => text.includes(block.text))
      const requestIds = new Set(
        inSection.flatMap((block) => {
          const f = block.schema === "ClientFrame" ? (tryCheck(block)?.decoded as ClientFrame | undefined) : undefined
          return f?.type === "command" && f.command.type === type ? [f.id] : []
        })
      )
      const results = inSection.flatMap((block) => {
        const f = block.schema === "ServerFrame" ? (tryCheck(block)?.decoded as ServerFrame | undefined) : undefined
        return f?.type === "result" && requestIds.has(f.id) ? [{ block, result: f.result }] : []
      })
      expect(results.length, `section \`${type}\`: results answering its requests`).toBeGreaterThan(0)
      const success = CommandTable[type].success
      for (const { block, result } of results) {
        let decoded: unknown
        try {
          decoded = Schema.decodeUnknownSync(success)(result)
        } catch (error) {
          throw new Error(`${where(block)}: the result is not a ${type} success:\n${String(error)}`)
        }
        expect(
          canonicalJson(Schema.encodeUnknownSync(success)(decoded)),
          `${where(block)}: the ${type} result has keys its success Schema drops`
        ).toBe(canonicalJson(result))
      }
    }
  })

  it("every error code is in the error code table", () => {
    const table = section(markdown, "Error codes")
    const missing = ErrorCode.literals.filter((code) => !new RegExp(`^\\|\\s*\`${code}\`\\s*\\|`, "m").test(table))
    expect(missing, "error codes without a row in PROTOCOL.md's error table").toEqual([])
  })

  it("the Codex thread's snapshot and events fold as the ThreadState section says", () => {
    const frames = decodedOf("ServerFrame").map(({ frame }) => frame as ServerFrame)
    const snapshot = frames.find((f): f is ServerFrame & { type: "snapshot" } => f.type === "snapshot")
    expect(snapshot, "a snapshot frame example").toBeDefined()
    const events = frames.filter(
      (f): f is ServerFrame & { type: "event" } => f.type === "event" && f.threadId === snapshot!.threadId
    )
    const state = ThreadState.fromSnapshot(snapshot!.snapshot)
    const pending = snapshot!.snapshot.prompts.find((p) => p.status === "pending")
    expect(pending, "the snapshot shows the pending question card").toBeDefined()
    // An event at or below the snapshot's seq is already in it; the next one applies.
    const before = events.filter((f) => f.seq <= snapshot!.snapshot.seq)
    const next = events.find((f) => f.seq === snapshot!.snapshot.seq + 1)
    expect(before.length, "an example event at or below the snapshot's seq").toBeGreaterThan(0)
    for (const f of before) expect(state.apply(f.seq, f.event)).toBe(false)
    expect(next?.event.type, "the example event right after the snapshot").toBe("user-input.resolved")
    expect(state.apply(next!.seq, next!.event)).toBe(true)
    const resolved = state.toSnapshot().prompts.find((p) => p.promptId === pending!.promptId)
    const respond = decodedOf("ClientFrame")
      .map(({ frame }) => frame as ClientFrame)
      .flatMap((f) => (f.type === "command" && f.command.type === "userInput.respond" ? [f.command] : []))[0]
    expect(resolved).toMatchObject({ status: "resolved", resolution: "answered", answers: respond?.answers })
  })

  it("example events inside event frames are events of the frame's thread", () => {
    for (const { block, frame } of decodedOf("ServerFrame")) {
      const f = frame as ServerFrame
      if (f.type === "event") expect(f.event.threadId, where(block)).toBe(f.threadId)
      if (f.type === "snapshot") expect(f.snapshot.threadId, where(block)).toBe(f.threadId)
    }
  })
})

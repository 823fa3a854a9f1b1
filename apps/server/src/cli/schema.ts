import * as contracts from "@planbridge/contracts"
import { ClientFrame, PROTOCOL_VERSION, RuntimeEvent, ServerFrame } from "@planbridge/contracts"
import { Effect, JsonSchema, Schema, type SchemaAST } from "effect"
import { writeFileSync } from "node:fs"
import { Io } from "./CliIo.ts"
import { ExitCode } from "./exitCodes.ts"

/** The three roots a client author generates code from; each is a `$defs` entry of the document. */
export const ROOT_DEFINITIONS = ["ClientFrame", "ServerFrame", "RuntimeEvent"] as const

/** A draft 2020-12 JSON Schema document as written to disk. */
export interface ProtocolJsonSchema {
  readonly $schema: string
  readonly $id: string
  readonly title: string
  readonly description: string
  readonly anyOf: ReadonlyArray<{ readonly $ref: string }>
  readonly $defs: JsonSchema.Definitions
}

/**
 * Definition names for the parts the frames share: every Schema the contracts export under
 * exactly one name. Schemas exported under several names (the branded ids share one AST, since
 * brands exist only for TypeScript) stay inline, because any one name would mislabel the others.
 */
const exportedNames = (): ReadonlyMap<SchemaAST.AST, string> => {
  const names = new Map<SchemaAST.AST, Array<string>>()
  for (const [name, value] of Object.entries(contracts)) {
    if (Schema.isSchema(value)) names.set(value.ast, [...(names.get(value.ast) ?? []), name])
  }
  return new Map([...names].flatMap(([ast, all]) => (all.length === 1 ? [[ast, all[0]!] as const] : [])))
}

/**
 * The protocol as one JSON Schema document: `$defs` holds `ClientFrame`, `ServerFrame`,
 * `RuntimeEvent` and every named part they share, referenced as `#/$defs/<Name>`, so that code
 * generators emit one type per contract Schema with the contract's name. The root is `anyOf`
 * the three for tools that only start from the root.
 */
export const protocolJsonSchema = (): ProtocolJsonSchema => {
  const names = exportedNames()
  const document = Schema.toJsonSchemaDocument(Schema.Union([ClientFrame, ServerFrame, RuntimeEvent]), {
    referencePolicy: ({ ast, identifier }) => identifier ?? names.get(ast)
  })
  const missing = ROOT_DEFINITIONS.filter((name) => document.definitions[name] === undefined)
  if (missing.length > 0) throw new Error(`the JSON Schema has no definition for ${missing.join(", ")}`)
  return {
    $schema: JsonSchema.META_SCHEMA_URI_DRAFT_2020_12,
    $id: `urn:planbridge:protocol:v${PROTOCOL_VERSION}`,
    title: `Planbridge protocol v${PROTOCOL_VERSION}`,
    description:
      "WebSocket frames of the Planbridge protocol (see PROTOCOL.md): $defs.ClientFrame is what a client sends, " +
      "$defs.ServerFrame what the server sends, $defs.RuntimeEvent the canonical events inside event frames. " +
      "Generated from the contracts' Effect Schemas; the server's decoder remains the authority.",
    anyOf: ROOT_DEFINITIONS.map((name) => ({ $ref: `#/$defs/${name}` })),
    $defs: document.definitions
  }
}

/** `planbridge schema [--out FILE]`: the document on stdout, or written to FILE. */
export const schema = (input: { readonly out: string | undefined }) =>
  Effect.gen(function* () {
    const io = yield* Io
    const text = `${JSON.stringify(protocolJsonSchema(), null, 2)}\n`
    if (input.out === undefined) {
      io.out(text)
      return ExitCode.ok
    }
    writeFileSync(input.out, text)
    io.out(`wrote the protocol's JSON Schema to ${input.out}\n`)
    return ExitCode.ok
  })

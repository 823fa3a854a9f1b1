import ts from "typescript"
import type { DefinitionChange, SurfaceResult } from "./schemaDiff.ts"

/**
 * The drift gate's type-declaration comparison, pure: the Claude Agent SDK publishes no schema,
 * only `.d.ts`, so its surfaces are compared as declarations — a type Planbridge decodes and every
 * type of the same file it reaches, by member where it is an object type. Comments are ignored
 * (the printer drops them): prose is not wire.
 */

export interface Declaration {
  /** The declaration as printed without comments. */
  readonly text: string
  /** Member name → printed member, for interfaces and object-literal types (and their intersections); constituents of a union. */
  readonly members: ReadonlyMap<string, string>
  /** The type names it refers to (resolved against the same file by the closure). */
  readonly refs: ReadonlySet<string>
}

const printer = ts.createPrinter({ removeComments: true })

const refsOf = (node: ts.Node, into: Set<string>): Set<string> => {
  if (ts.isTypeReferenceNode(node) && ts.isIdentifier(node.typeName)) into.add(node.typeName.text)
  if (ts.isExpressionWithTypeArguments(node) && ts.isIdentifier(node.expression)) into.add(node.expression.text)
  ts.forEachChild(node, (child) => {
    refsOf(child, into)
  })
  return into
}

const membersOf = (node: ts.Node, sf: ts.SourceFile, into: Map<string, string>): Map<string, string> => {
  const add = (members: ts.NodeArray<ts.TypeElement>) => {
    for (const m of members) {
      const name = m.name !== undefined ? m.name.getText(sf) : ts.isIndexSignatureDeclaration(m) ? "[index]" : "(call)"
      into.set(name, printer.printNode(ts.EmitHint.Unspecified, m, sf))
    }
  }
  if (ts.isInterfaceDeclaration(node) || ts.isTypeLiteralNode(node)) add(node.members)
  else if (ts.isTypeAliasDeclaration(node)) membersOf(node.type, sf, into)
  else if (ts.isIntersectionTypeNode(node)) for (const t of node.types) membersOf(t, sf, into)
  else if (ts.isUnionTypeNode(node))
    // A union's constituents by their text, so a literal added to `'a' | 'b'` reads `+'c'`.
    for (const t of node.types) {
      const text = printer.printNode(ts.EmitHint.Unspecified, t, sf)
      into.set(text.length > 60 ? `${text.slice(0, 57)}...` : text, text)
    }
  return into
}

/** Every named type declared at the top level of a `.d.ts`. */
export const readDeclarations = (fileName: string, source: string): ReadonlyMap<string, Declaration> => {
  const sf = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true)
  const out = new Map<string, Declaration>()
  for (const statement of sf.statements) {
    if (
      ts.isTypeAliasDeclaration(statement) ||
      ts.isInterfaceDeclaration(statement) ||
      ts.isEnumDeclaration(statement)
    ) {
      out.set(statement.name.text, {
        text: printer.printNode(ts.EmitHint.Unspecified, statement, sf),
        members: membersOf(statement, sf, new Map()),
        refs: refsOf(statement, new Set())
      })
    }
  }
  return out
}

const closure = (decls: ReadonlyMap<string, Declaration>, root: string): Set<string> => {
  const seen = new Set<string>()
  const queue = [root]
  for (let name = queue.pop(); name !== undefined; name = queue.pop()) {
    const decl = decls.get(name)
    if (seen.has(name) || decl === undefined) continue
    seen.add(name)
    queue.push(...decl.refs)
  }
  return seen
}

const describe = (before: Declaration, after: Declaration): ReadonlyArray<string> => {
  const fields: Array<string> = []
  for (const key of after.members.keys()) if (!before.members.has(key)) fields.push(`+${key}`)
  for (const key of before.members.keys()) if (!after.members.has(key)) fields.push(`-${key}`)
  for (const [key, text] of before.members)
    if (after.members.has(key) && after.members.get(key) !== text) fields.push(`~${key}`)
  return fields.length > 0 ? fields : ["changed"]
}

/** Compares the declaration `root` and every declaration of the same file it reaches. */
export const diffDeclaration = (
  pinned: ReadonlyMap<string, Declaration>,
  newest: ReadonlyMap<string, Declaration>,
  root: string
): SurfaceResult => {
  if (!newest.has(root)) return { status: "missing", what: root }
  const names = new Set([...closure(pinned, root), ...closure(newest, root)])
  const changes: Array<DefinitionChange> = []
  for (const name of [...names].sort()) {
    const before = pinned.get(name)
    const after = newest.get(name)
    if (before === undefined || after === undefined)
      changes.push({ definition: name, fields: [before === undefined ? "new declaration" : "declaration removed"] })
    else if (before.text !== after.text) changes.push({ definition: name, fields: describe(before, after) })
  }
  return changes.length === 0 ? { status: "unchanged" } : { status: "changed", changes }
}

/**
 * The JSON-RPC `id` of a message from the start of its text alone, or null: so that a request
 * too long to read is still answered under its own id and the editor does not wait forever.
 * A small scanner, not a parser: it tracks strings and nesting, and reads the value of the
 * first `"id"` key of the top-level object when that value is a number or a string.
 */
export const idOfHead = (head: string): string | number | null => {
  let depth = 0
  let i = 0
  while (i < head.length) {
    const c = head[i]
    if (c === '"') {
      const end = stringEnd(head, i)
      if (end === -1) return null
      if (depth === 1 && head.slice(i, end + 1) === '"id"') {
        const value = valueAfterColon(head, end + 1)
        if (value !== undefined) return value
      }
      i = end + 1
      continue
    }
    if (c === "{" || c === "[") depth++
    else if (c === "}" || c === "]") depth--
    i++
  }
  return null
}

/** The index of the quote closing the string that opens at `start`, or -1 when it is cut off. */
const stringEnd = (text: string, start: number): number => {
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === "\\") i++
    else if (text[i] === '"') return i
  }
  return -1
}

const valueAfterColon = (text: string, from: number): string | number | undefined => {
  const match = /^\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*[,}]/u.exec(text.slice(from, from + 1100))
  if (match === null) return undefined
  const literal = match[1]!
  const value: unknown = JSON.parse(literal)
  return typeof value === "number" || typeof value === "string" ? value : undefined
}

/**
 * The size and the head of `JSON.stringify(value)` without making it. A stub of a 20 MiB `raw`
 * payload (EventSize.ts) needs only the payload's size and its first 4 KiB of JSON; serializing
 * it whole for that was a transient copy of the line, and the head, a slice of that copy, kept
 * all of it alive as long as the event was (issue 31, item 5). Values are JSON data (the
 * contracts' `Schema.Json`): plain objects, arrays, strings, numbers, booleans, null.
 */

/** A character JSON.stringify escapes, or half of a surrogate pair (lone ones are escaped). */
const SPECIAL = /[\u0000-\u001f"\\\ud800-\udfff]/

/** What escaping adds to the UTF-8 bytes of a string (`Buffer.byteLength` counts a lone surrogate as 3). */
const escapeExtraBytes = (s: string): number => {
  const first = s.search(SPECIAL)
  if (first === -1) return 0
  let extra = 0
  for (let i = first; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c === 0x22 || c === 0x5c || c === 0x08 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d) extra += 1
    else if (c < 0x20) extra += 5
    else if (c >= 0xd800 && c <= 0xdbff) {
      const next = s.charCodeAt(i + 1)
      if (next >= 0xdc00 && next <= 0xdfff) i++
      else extra += 3
    } else if (c >= 0xdc00 && c <= 0xdfff) extra += 3
  }
  return extra
}

const stringJsonBytes = (s: string): number => Buffer.byteLength(s, "utf8") + 2 + escapeExtraBytes(s)

/** Members JSON.stringify leaves out of an object (and writes as `null` in an array). */
const isSkipped = (u: unknown): boolean => u === undefined || typeof u === "function" || typeof u === "symbol"

const hasToJson = (u: object): boolean => typeof (u as { toJSON?: unknown }).toJSON === "function"

/** The UTF-8 bytes of `JSON.stringify(value)` (0 when it yields nothing), counted, not serialized. */
export const jsonUtf8Bytes = (value: unknown): number => {
  if (isSkipped(value)) return 0
  const visit = (u: unknown): number => {
    if (typeof u === "string") return stringJsonBytes(u)
    if (u === null || typeof u !== "object") return JSON.stringify(u)?.length ?? 4
    // Not JSON data: counted the slow way, as it serializes.
    if (hasToJson(u)) return Buffer.byteLength(JSON.stringify(u) ?? "null", "utf8")
    if (Array.isArray(u)) {
      let bytes = 2 + Math.max(0, u.length - 1)
      for (const item of u as ReadonlyArray<unknown>) bytes += isSkipped(item) ? 4 : visit(item)
      return bytes
    }
    let bytes = 2
    let members = 0
    for (const [key, item] of Object.entries(u)) {
      if (isSkipped(item)) continue
      bytes += stringJsonBytes(key) + 1 + visit(item)
      members += 1
    }
    return bytes + Math.max(0, members - 1)
  }
  return visit(value)
}

/**
 * `JSON.stringify(value).slice(0, maxChars)`, made from at most about `maxChars` characters of
 * it: a string is escaped only as far as the head reaches.
 */
export const jsonHead = (value: unknown, maxChars: number): string => {
  let out = ""
  /** Appends; false once the head is full (nothing more is needed). */
  const emit = (text: string): boolean => {
    out += text
    return out.length < maxChars
  }
  const visit = (u: unknown): boolean => {
    // One character more than the room left: an escape cut short at the end stays past the head.
    if (typeof u === "string") return emit(JSON.stringify(u.slice(0, maxChars - out.length + 1)))
    if (u === null || typeof u !== "object" || hasToJson(u)) return emit(JSON.stringify(u) ?? "null")
    if (Array.isArray(u)) {
      if (!emit("[")) return false
      for (let i = 0; i < u.length; i++) {
        if (i > 0 && !emit(",")) return false
        const item: unknown = u[i]
        if (!(isSkipped(item) ? emit("null") : visit(item))) return false
      }
      return emit("]")
    }
    if (!emit("{")) return false
    let first = true
    for (const [key, item] of Object.entries(u)) {
      if (isSkipped(item)) continue
      if (!first && !emit(",")) return false
      first = false
      if (!emit(`${JSON.stringify(key)}:`) || !visit(item)) return false
    }
    return emit("}")
  }
  if (!isSkipped(value)) visit(value)
  return out.slice(0, maxChars)
}

/**
 * Makes V8 store `text` as one flat string now if it is a rope (a concatenation not yet copied
 * together), as every reader that needs its characters in one piece would do later: converting
 * a string to a number flattens it first (a JSON text is never a number, so the conversion stops
 * at its first character). Returns `text`.
 */
export const flatten = (text: string): string => {
  Number(text)
  return text
}

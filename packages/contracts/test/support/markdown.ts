/** Helpers shared by the tests that keep EVENTS.md and PROTOCOL.md honest. */

/** JSON with sorted keys, so that key order (which decoding normalizes) does not count. */
export const canonicalJson = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v
  )

/**
 * Section text from the first heading whose title `matches`, up to the next heading of the
 * same or higher level.
 */
export const section = (
  document: string,
  source: string,
  title: string,
  matches: (heading: string) => boolean
): string => {
  const lines = source.split("\n")
  const start = lines.findIndex((line) => /^#{1,6}\s/.test(line) && matches(line.replace(/^#+\s*/, "").trim()))
  if (start < 0) throw new Error(`${document} has no section "${title}"`)
  const level = /^#+/.exec(lines[start] ?? "")?.[0].length ?? 1
  const end = lines.findIndex((line, i) => i > start && new RegExp(`^#{1,${level}}\\s`).test(line))
  return lines.slice(start, end < 0 ? undefined : end).join("\n")
}

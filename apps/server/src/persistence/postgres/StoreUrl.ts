/** Whether a `--store` value names a PostgreSQL database rather than SQLite. */
export const isPostgresUrl = (store: string): boolean => /^postgres(ql)?:\/\//i.test(store)

/** The URL as logs and errors may show it: a password is never printed. */
export const redactUrl = (url: string): string => {
  try {
    const parsed = new URL(url)
    if (parsed.password !== "") parsed.password = "***"
    return parsed.toString()
  } catch {
    return "the PostgreSQL store (its URL does not parse)"
  }
}

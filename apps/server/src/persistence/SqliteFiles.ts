import { dirname, join } from "node:path"
import { ensurePrivateDir, ensurePrivateFile, type Warn } from "./PrivateFiles.ts"

/** Where a data directory keeps its SQLite database. */
export const databaseFileIn = (dataDir: string): string => join(dataDir, "planbridge.db")

/**
 * SQLite creates the database file with 0644 minus the umask, and its -wal/-shm (and -journal)
 * files with the database file's mode. So: a private directory, the database file created 0600
 * before SQLite opens it, and any leftover companion file of a looser mode tightened.
 */
export const preparePrivateSqliteFiles = (filename: string, warn: Warn): void => {
  ensurePrivateDir(dirname(filename), warn)
  ensurePrivateFile(filename, warn, { create: true })
  for (const suffix of ["-wal", "-shm", "-journal"]) ensurePrivateFile(`${filename}${suffix}`, warn)
}

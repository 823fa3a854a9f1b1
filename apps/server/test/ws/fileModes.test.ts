import BetterSqlite3 from "better-sqlite3"
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest"
import { ServerStartError, startServer } from "../../src/http/HttpServer.ts"
import { loadOrCreateToken, tokenFileIn } from "../../src/http/Security.ts"
import { databaseFileIn } from "../../src/persistence/SqliteFiles.ts"
import { captureLog } from "../support/logCapture.ts"

const modeOf = (path: string) => `0${(statSync(path).mode & 0o777).toString(8)}`
const DB_FILES = ["token", "planbridge.db", "planbridge.db-wal", "planbridge.db-shm"]
/** The token and database files with their modes. */
const modesIn = (dir: string) => Object.fromEntries(DB_FILES.map((name) => [name, modeOf(join(dir, name))]))
/** Every path under `dir` (other parts of the server keep files there too) that others can read. */
const notPrivate = (dir: string): Array<string> =>
  readdirSync(dir, { recursive: true, encoding: "utf8" })
    .map((name) => join(dir, name))
    .filter((path) => (statSync(path).mode & 0o077) !== 0)

const root = mkdtempSync(join(tmpdir(), "planbridge-modes-"))
afterAll(() => rmSync(root, { recursive: true, force: true }))
// The usual umask, under which files are created 0644 and directories 0755 unless told otherwise.
let umask: number
beforeEach(() => void (umask = process.umask(0o022)))
afterEach(() => void process.umask(umask))

describe("the data dir is private whatever the umask", () => {
  it("a new data dir is 0700, the token, the database and its -wal and -shm files 0600", async () => {
    const dir = join(root, "fresh", "data")
    const server = await startServer({ dataDir: dir, host: "127.0.0.1", port: 0, logLevel: "silent", providers: [] })
    try {
      // Migrations have written, so the WAL and its index exist while the server runs.
      expect(modeOf(dir)).toBe("0700")
      expect(modesIn(dir)).toEqual({
        token: "0600",
        "planbridge.db": "0600",
        "planbridge.db-wal": "0600",
        "planbridge.db-shm": "0600"
      })
      expect(notPrivate(dir)).toEqual([])
    } finally {
      await server.close()
    }
    // `planbridge token` on a data dir of its own.
    const tokenOnly = join(root, "token-only")
    loadOrCreateToken(tokenOnly)
    expect([modeOf(tokenOnly), modeOf(tokenFileIn(tokenOnly))]).toEqual(["0700", "0600"])
  })

  it("an existing 0644 token and database (and -wal, -shm) and a 0755 dir are tightened, with warnings", async () => {
    const dir = join(root, "loose")
    mkdirSync(dir, { mode: 0o755 })
    const token = "Zq7Xv2Lr9Tn4Wm8Kp3Hs6Jd1Fb5Gc0Ya2Ue7Io4Nx9Q"
    writeFileSync(tokenFileIn(dir), `${token}\n`, { mode: 0o644 })
    // Another connection (as a CLI beside the server would) keeps the WAL files in place.
    const other = new BetterSqlite3(databaseFileIn(dir))
    other.pragma("journal_mode = WAL")
    other.exec("create table scratch (x); insert into scratch values (1)")
    chmodSync(dir, 0o755)
    expect([modeOf(dir), ...Object.values(modesIn(dir))]).toEqual(["0755", "0644", "0644", "0644", "0644"])
    const log = captureLog()
    const options = { dataDir: dir, host: "127.0.0.1", port: 0, providers: [], logDestination: log.destination }
    const server = await startServer(options)
    try {
      expect(server.token).toBe(token)
      expect(modeOf(dir)).toBe("0700")
      expect(modesIn(dir)).toEqual({
        token: "0600",
        "planbridge.db": "0600",
        "planbridge.db-wal": "0600",
        "planbridge.db-shm": "0600"
      })
      expect(notPrivate(dir)).toEqual([])
      const warnings = log
        .parsed()
        .filter((l) => l.level === 40)
        .map((l) => l.msg ?? "")
      for (const path of [dir, ...DB_FILES.map((f) => join(dir, f))]) {
        expect(warnings.filter((w) => w.startsWith(`${path} was accessible to other users`))).toHaveLength(1)
      }
    } finally {
      other.close()
      await server.close()
    }
    expect(existsSync(databaseFileIn(dir))).toBe(true)
  })

  it("a data dir that cannot be made private is refused with an error naming it", async () => {
    // procfs refuses every mode change (to root too), so /proc/self (0555) stays readable by all.
    const options = { dataDir: "/proc/self", host: "127.0.0.1", port: 0, logLevel: "silent", providers: [] } as const
    const refused = startServer(options)
    await expect(refused).rejects.toBeInstanceOf(ServerStartError)
    const message = /^\/proc\/self is accessible to other users \(mode 0555\) and cannot be made private \(0700\)/
    await expect(refused).rejects.toThrow(message)
  })

  it("a shared directory (sticky or world-writable, like /tmp) is refused and left as it was", async () => {
    for (const mode of [0o1777, 0o777]) {
      const dir = join(root, `shared-${mode.toString(8)}`)
      mkdirSync(dir)
      chmodSync(dir, mode)
      const refused = startServer({ dataDir: dir, host: "127.0.0.1", port: 0, logLevel: "silent", providers: [] })
      await expect(refused).rejects.toBeInstanceOf(ServerStartError)
      await expect(refused).rejects.toThrow(`${dir} is a shared directory (mode ${mode.toString(8)})`)
      expect(statSync(dir).mode & 0o7777).toBe(mode)
      expect(readdirSync(dir)).toEqual([])
    }
  })
})

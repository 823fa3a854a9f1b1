// A real PostgreSQL 15 (Debian's `postgresql` package) for one test file: a fresh cluster in a
// temporary directory, owned by the unprivileged `postgres` user (initdb refuses root), listening
// on a free loopback port only, stopped and removed afterwards. There is no fallback and no skip:
// when PostgreSQL cannot be started the test fails with what went wrong (.ci/run installs it).
import { execFile, execFileSync } from "node:child_process"
import { chmodSync, chownSync, existsSync, mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"

const BIN = process.env.PLANBRIDGE_PG_BIN ?? "/usr/lib/postgresql/15/bin"
const PG_USER = "postgres"

export interface TestPostgres {
  /** `postgres://postgres@127.0.0.1:PORT/postgres` (trust authentication on loopback). */
  readonly url: string
  readonly port: number
  /** The cluster's data directory (tests may read its files: what reached the disk). */
  readonly dataDir: string
  /** Runs a statement as the superuser on the `postgres` database (CHECKPOINT, pg_terminate_backend…). */
  readonly admin: (sql: string) => Promise<void>
  /** A fresh database of its own on the cluster, as a connection URL. */
  readonly createDatabase: (name: string) => Promise<string>
  /**
   * `pg_ctl restart -m MODE`, waiting until the cluster accepts connections again: `immediate`
   * kills every backend at once (a crash: recovery on start), `fast` ends them with
   * "terminating connection due to administrator command". Asynchronous: the test's own
   * connections see the database go away and come back while pg_ctl runs. With `awayMs`, it is
   * stopped, left down that long, and started again (an outage of a chosen length).
   */
  readonly restart: (mode: "immediate" | "fast", options?: { readonly awayMs?: number }) => Promise<void>
  readonly stop: () => void
}

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

const userIds = (user: string): { uid: number; gid: number } => ({
  uid: Number(execFileSync("id", ["-u", user], { encoding: "utf8" }).trim()),
  gid: Number(execFileSync("id", ["-g", user], { encoding: "utf8" }).trim())
})

/** A PostgreSQL program's command line, as the `postgres` user when we are root. */
const commandFor = (program: string, args: ReadonlyArray<string>): [string, Array<string>] =>
  process.getuid?.() === 0
    ? ["runuser", ["-u", PG_USER, "--", join(BIN, program), ...args]]
    : [join(BIN, program), [...args]]

/** Runs a PostgreSQL program as the `postgres` user (when we are root) and says what failed. */
const runAs = (program: string, args: ReadonlyArray<string>): string => {
  const [command, argv] = commandFor(program, args)
  try {
    return execFileSync(command, argv, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 60_000 })
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error)
    const stderr = (error as { stderr?: string }).stderr ?? ""
    throw new Error(`PostgreSQL: ${program} ${args.join(" ")} failed: ${detail}\n${stderr}`)
  }
}

/** `runAs` without blocking the event loop. */
const runAsAsync = (program: string, args: ReadonlyArray<string>): Promise<void> => {
  const [command, argv] = commandFor(program, args)
  return new Promise((resolve, reject) => {
    execFile(command, argv, { encoding: "utf8", timeout: 60_000 }, (error, _stdout, stderr) => {
      if (error === null) resolve()
      else reject(new Error(`PostgreSQL: ${program} ${args.join(" ")} failed: ${error.message}\n${stderr}`))
    })
  })
}

/** Starts a throw-away cluster; call `stop` (afterAll) to stop it and remove its directory. */
export const startPostgres = async (options: { readonly durable?: boolean } = {}): Promise<TestPostgres> => {
  if (!existsSync(join(BIN, "initdb")))
    throw new Error(`PostgreSQL 15 is required for this test: ${BIN}/initdb is missing (apt-get install postgresql)`)
  const dir = mkdtempSync(join(tmpdir(), "planbridge-pg-"))
  if (process.getuid?.() === 0) {
    const { uid, gid } = userIds(PG_USER)
    chownSync(dir, uid, gid)
  }
  chmodSync(dir, 0o700)
  const data = join(dir, "data")
  const port = await freePort()
  let started = false
  const stop = (): void => {
    try {
      if (started) runAs("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"])
    } finally {
      started = false
      rmSync(dir, { recursive: true, force: true })
    }
  }
  // Tests need no durability across a power loss (fsync off); the bench measures with it (`durable`).
  const fsync = options.durable === true ? "" : " -c fsync=off"
  const settings = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=200${fsync}`
  try {
    runAs("initdb", ["-D", data, "-A", "trust", "-U", PG_USER, "--no-sync", "-E", "UTF8", "--locale=C"])
    runAs("pg_ctl", ["-D", data, "-l", join(dir, "log"), "-o", settings, "-w", "-t", "60", "start"])
    started = true
  } catch (error) {
    stop()
    throw error
  }
  const url = `postgres://${PG_USER}@127.0.0.1:${port}/postgres`
  const createDatabase = async (name: string): Promise<string> => {
    if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a database name for tests: ${name}`)
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    try {
      await client.query(`create database ${name}`)
    } finally {
      await client.end()
    }
    return `postgres://${PG_USER}@127.0.0.1:${port}/${name}`
  }
  const admin = async (sql: string): Promise<void> => {
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    try {
      await client.query(sql)
    } finally {
      await client.end()
    }
  }
  const restart = async (mode: "immediate" | "fast", options: { readonly awayMs?: number } = {}): Promise<void> => {
    if (options.awayMs === undefined)
      return runAsAsync("pg_ctl", ["-D", data, "-l", join(dir, "log"), "-m", mode, "-w", "-t", "60", "restart"])
    await runAsAsync("pg_ctl", ["-D", data, "-m", mode, "-w", "-t", "60", "stop"])
    await new Promise((resolve) => setTimeout(resolve, options.awayMs))
    await runAsAsync("pg_ctl", ["-D", data, "-l", join(dir, "log"), "-o", settings, "-w", "-t", "60", "start"])
  }
  return { url, port, dataDir: data, admin, createDatabase, restart, stop }
}

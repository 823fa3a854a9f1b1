import type BetterSqlite3 from "better-sqlite3"
import { statSync } from "node:fs"
import { createRequire } from "node:module"
import { Worker } from "node:worker_threads"
import type { Warn } from "./PrivateFiles.ts"

/** SQLite's own default: the committing connection checkpoints once the WAL holds this many frames. */
export const DEFAULT_AUTOCHECKPOINT_FRAMES = 1000
/**
 * While the checkpointer runs, the committing connection checkpoints only past this many frames
 * (16 MB of 4 KB pages): a backstop, should the checkpointer fall behind a burst.
 */
const BACKSTOP_AUTOCHECKPOINT_FRAMES = 4000

export interface WalCheckpointerOptions {
  /**
   * The checkpointer starts once the WAL file has held this many frames, i.e. when the first
   * checkpoint would be due: small and short-lived databases (the CLI's, tests') never start it.
   */
  readonly startAtFrames: number
  /** How long commits gather after the first one before a checkpoint copies their pages at once. */
  readonly intervalMs: number
}

export const DEFAULT_WAL_CHECKPOINTER: WalCheckpointerOptions = {
  startAtFrames: DEFAULT_AUTOCHECKPOINT_FRAMES,
  intervalMs: 100
}

/** A WAL frame is a page after a header of its own (sqlite.org/fileformat.html, "WAL File Format"). */
const WAL_FRAME_HEADER_BYTES = 24

/** Slots of the state shared with the worker. */
const COMMITS = 0
const STOP = 1

/*
 * The worker, as CommonJS source (`eval`): no file of its own to find from the sources or from the
 * build. It sleeps until a commit is counted, lets commits gather for `intervalMs`, and copies
 * them into the database with a PASSIVE checkpoint (which never blocks the writer). Every
 * checkpoint's outcome is posted, for tests and for the `checkpointed` receipt.
 */
const WORKER_SOURCE = `
const { workerData, parentPort } = require("node:worker_threads")
const Database = require(workerData.module)
const state = new Int32Array(workerData.state)
const db = new Database(workerData.filename)
// As the server's connection: a lock held a moment by the other connection (opening a WAL that
// is being recovered) is waited for, not an error that retires the checkpointer.
db.pragma("busy_timeout = 5000")
let seen = 0
for (;;) {
  Atomics.wait(state, ${COMMITS}, seen)
  if (Atomics.load(state, ${STOP}) === 1) break
  Atomics.wait(state, ${STOP}, 0, workerData.intervalMs)
  if (Atomics.load(state, ${STOP}) === 1) break
  seen = Atomics.load(state, ${COMMITS})
  parentPort.postMessage(db.pragma("wal_checkpoint(PASSIVE)")[0])
}
db.close()
`

/** What a checkpoint reported: WAL frames in all, and how many of them are now in the database. */
export interface CheckpointOutcome {
  readonly busy: number
  readonly log: number
  readonly checkpointed: number
}

/**
 * WAL checkpoints on a thread of their own, with a connection of their own (issue 17): SQLite's
 * auto-checkpoint runs on the connection that commits, i.e. on the event loop, and a checkpoint
 * syncs the WAL and the database (`synchronous = NORMAL`): ~90 ms of every 50k events ingested
 * were those syncs, and a commit that happened to checkpoint stalled the event stream. The
 * pages and the syncs are the same (durability unchanged); only the thread that waits for them
 * changes. The committing connection keeps an auto-checkpoint as a backstop (4,000 frames while
 * the checkpointer runs), and returns to SQLite's default if the worker fails.
 */
export const makeWalCheckpointer = (
  sqlite: BetterSqlite3.Database,
  filename: string,
  options: WalCheckpointerOptions,
  warn: Warn
) => {
  const state = new Int32Array(new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT))
  const walFile = `${filename}-wal`
  const frameBytes = (sqlite.pragma("page_size", { simple: true }) as number) + WAL_FRAME_HEADER_BYTES
  /** The WAL file never shrinks while the database is open (SQLite rewinds it): its size is a high-water mark. */
  const walFrames = (): number => (statSync(walFile, { throwIfNoEntry: false })?.size ?? 0) / frameBytes
  let worker: Worker | undefined
  /** Never started (again) once it failed or stopped, nor for a database without a WAL file. */
  let retired = !Number.isFinite(options.startAtFrames)
  let exited: Promise<void> = Promise.resolve()
  const waiting: Array<(outcome: CheckpointOutcome) => void> = []

  /** The connection checkpoints as SQLite would again; said on stderr, as nothing is lost but the thread. */
  const fail = (error: unknown): void => {
    retired = true
    worker = undefined
    warn(`WAL checkpoints are back on the committing connection: the checkpointer failed (${String(error)})`)
    if (sqlite.open) sqlite.pragma(`wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT_FRAMES}`)
  }

  const start = (): void => {
    const started = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        module: createRequire(import.meta.url).resolve("better-sqlite3"),
        filename,
        intervalMs: options.intervalMs,
        state: state.buffer
      }
    })
    // Never what keeps the process alive: closing the database stops it.
    started.unref()
    started.on("message", (outcome: CheckpointOutcome) => {
      for (const resolve of waiting.splice(0)) resolve(outcome)
    })
    started.on("error", fail)
    exited = new Promise((resolve) => started.once("exit", () => resolve()))
    sqlite.pragma(`wal_autocheckpoint = ${BACKSTOP_AUTOCHECKPOINT_FRAMES}`)
    worker = started
  }

  return {
    /** Tells the checkpointer of a commit on the connection; starts it once the WAL is as large as `startAtFrames`. */
    committed: (): void => {
      if (worker === undefined) {
        if (retired) return
        // Called after a commit: whatever goes wrong here must not turn a committed batch into an error.
        try {
          if (walFrames() < options.startAtFrames) return
          start()
        } catch (error) {
          return fail(error)
        }
      }
      Atomics.add(state, COMMITS, 1)
      Atomics.notify(state, COMMITS)
    },
    /** Resolves with the outcome of the checkpointer's next checkpoint (tests). */
    checkpointed: (): Promise<CheckpointOutcome> => new Promise((resolve) => waiting.push(resolve)),
    /** Whether the worker has been started and not stopped. */
    running: (): boolean => worker !== undefined,
    /** Stops the worker and waits until it has closed its connection (before the database is closed). */
    stop: (): Promise<void> => {
      retired = true
      if (worker === undefined) return exited
      // Referenced again while it stops: its exit is awaited, which must keep the process alive.
      worker.ref()
      worker = undefined
      Atomics.store(state, STOP, 1)
      Atomics.add(state, COMMITS, 1)
      Atomics.notify(state, COMMITS)
      Atomics.notify(state, STOP)
      return exited
    }
  }
}

export type WalCheckpointer = ReturnType<typeof makeWalCheckpointer>

import * as Data from "effect/Data"
import { describeCause } from "../util/describeCause.ts"
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from "node:fs"

/**
 * The data dir holds the token and every event of every thread: nobody but its owner may read
 * it, whatever the umask. New paths are created private; existing ones that are not are
 * tightened (with a warning naming them), or refused when that is impossible.
 */

/** A `Data` class, not a Schema one: `planbridge token` loads this file, and Schema is ~820 KB to compile. */
export class PrivateFileError extends Data.TaggedError("PrivateFileError")<{
  readonly message: string
  /** What the file system threw, when it threw. */
  readonly cause?: unknown
}> {}

export type Warn = (message: string) => void

export const warnOnStderr: Warn = (message) => void process.stderr.write(`planbridge: warning: ${message}\n`)

const PRIVATE_DIR = 0o700
const PRIVATE_FILE = 0o600
const octal = (mode: number) => `0${(mode & 0o777).toString(8)}`

/** World-writable or sticky (`/tmp`, a shared drop folder): others' files live there too. */
const SHARED_DIR_BITS = 0o1002

const makePrivate = (path: string, mode: number, warn: Warn): void => {
  const current = statSync(path).mode
  if ((current & 0o077) === 0) return
  // Tightening a shared directory would lock every other user and program out of it (a data dir
  // of `/tmp` once turned `/tmp` into 0700); only a directory of our own may be tightened.
  if (mode === PRIVATE_DIR && (current & SHARED_DIR_BITS) !== 0) {
    throw new PrivateFileError({
      message:
        `${path} is a shared directory (mode ${(current & 0o7777).toString(8)}) and cannot be a data dir; ` +
        `use a directory of its own inside it, e.g. ${path.replace(/\/+$/u, "")}/planbridge`
    })
  }
  try {
    chmodSync(path, mode)
  } catch (cause) {
    throw new PrivateFileError({
      message:
        `${path} is accessible to other users (mode ${octal(current)}) and cannot be made private ` +
        `(${octal(mode)}): ${describeCause(cause)}; change its mode or owner`,
      cause
    })
  }
  warn(`${path} was accessible to other users (mode ${octal(current)}); changed to ${octal(mode)}`)
}

/** Creates `dir` (and missing parents) with mode 0700, or makes an existing one 0700. */
export const ensurePrivateDir = (dir: string, warn: Warn): void => {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR })
  makePrivate(dir, PRIVATE_DIR, warn)
}

/** Makes an existing file 0600; with `create`, first creates a missing one (empty) as 0600. */
export const ensurePrivateFile = (file: string, warn: Warn, options: { readonly create?: boolean } = {}): void => {
  if (!existsSync(file)) {
    if (options.create !== true) return
    // The umask can only remove bits from 0600, so a file created here is never readable by others.
    closeSync(openSync(file, "a", PRIVATE_FILE))
  }
  makePrivate(file, PRIVATE_FILE, warn)
}

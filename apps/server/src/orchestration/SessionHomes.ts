import { Context, Effect, Layer } from "effect"
import { existsSync, readdirSync, rmSync } from "node:fs"
import { join, relative, resolve, sep } from "node:path"
import { ensurePrivateDir } from "../persistence/PrivateFiles.ts"
import { storeFailure, type StoreError } from "../persistence/StoreError.ts"

/**
 * The directories where providers keep their own state for a thread (Codex's rollout, Claude's
 * session log): `<data dir>/homes/<threadId>`, mode 0700, like the rest of the data dir. One is
 * kept while its thread may be resumed, i.e. while a thread's last `session.started` names it as
 * its `providerHome`; start-up recovery removes every other one (`sweep`).
 */
export class SessionHomes extends Context.Service<
  SessionHomes,
  {
    /** The directory of a new thread (not created yet). */
    readonly dirFor: (threadId: string) => string
    /** True when `path` is one of ours, so that creating or removing it is ours to do. */
    readonly owns: (path: string) => boolean
    /** Creates the directory 0700 (an existing one is made 0700); a failure is the data dir's (`write`, naming the path). */
    readonly prepare: (path: string) => Effect.Effect<void, StoreError>
    /** Removes one of ours with everything in it; anything else is left alone. */
    readonly remove: (path: string) => Effect.Effect<void>
    readonly exists: (path: string) => Effect.Effect<boolean>
    /** The thread ids that have a directory, for the start-up sweep. */
    readonly list: Effect.Effect<ReadonlyArray<string>>
  }
>()("planbridge/SessionHomes") {
  static readonly layer = (dataDir: string) => {
    const root = resolve(dataDir, "homes")
    /** A direct child of `homes/` (or inside one), never `homes/` itself or anything outside. */
    const owns = (path: string) => {
      const rel = relative(root, resolve(path))
      return rel.length > 0 && !rel.startsWith("..") && !rel.startsWith(sep) && rel !== "."
    }
    return Layer.succeed(
      SessionHomes,
      SessionHomes.of({
        dirFor: (threadId) => join(root, threadId),
        owns,
        prepare: (path) =>
          Effect.try({
            try: () => {
              ensurePrivateDir(root, () => undefined)
              ensurePrivateDir(path, () => undefined)
            },
            catch: storeFailure("write", `create ${path}`)
          }),
        remove: (path) =>
          owns(path) ? Effect.ignore(Effect.try(() => rmSync(path, { recursive: true, force: true }))) : Effect.void,
        exists: (path) => Effect.sync(() => existsSync(path)),
        list: Effect.sync(() => {
          try {
            return readdirSync(root)
          } catch {
            return []
          }
        })
      })
    )
  }
}

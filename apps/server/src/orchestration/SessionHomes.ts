import { Context, Effect, Layer, Schema } from "effect"
import { existsSync, readdirSync, rmSync } from "node:fs"
import { join, relative, resolve, sep } from "node:path"
import { ensurePrivateDir } from "../persistence/PrivateFiles.ts"

/** Why a thread's directory could not be made or removed (the message names the path). */
export class SessionHomeError extends Schema.TaggedError<SessionHomeError>()("SessionHomeError", {
  message: Schema.String,
  /** What creating it threw. */
  cause: Schema.Defect()
}) {}

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
    /** Creates the directory 0700 (an existing one is made 0700). */
    readonly prepare: (path: string) => Effect.Effect<void, SessionHomeError>
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
            catch: (cause) =>
              new SessionHomeError({
                message: `cannot create ${path}: ${cause instanceof Error ? cause.message : String(cause)}`,
                cause
              })
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

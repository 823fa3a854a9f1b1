import type { ErrorCode } from "@planbridge/contracts"
import { Data } from "effect"

/** What a command can fail with: the server's typed codes, plus what only a client can see. */
export type ClientErrorCode = ErrorCode | "disconnected" | "closed" | "bad_frame"

/**
 * A failed command or connection. `code` is the server's `ErrorCode` when the server answered;
 * `disconnected` when the connection dropped before a command that is not safe to resend was
 * answered; `closed` after `close()` or a refused token; `bad_frame` when the server sent
 * something this client cannot decode. `path` points into the command's payload when the server
 * named one; `cause` keeps what this client caught (a socket that could not open). A tagged error
 * (`_tag: "PlanbridgeError"`), so an Effect program can `catchTag` it; still an `Error` for
 * `await`/`instanceof` users.
 */
export class PlanbridgeError extends Data.TaggedError("PlanbridgeError")<{
  readonly code: ClientErrorCode
  readonly message: string
  readonly path?: ReadonlyArray<string | number> | undefined
  readonly cause?: unknown
}> {}

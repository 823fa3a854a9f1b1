import type { ErrorCode } from "@planbridge/contracts"

/** What a command can fail with: the server's typed codes, plus what only a client can see. */
export type ClientErrorCode = ErrorCode | "disconnected" | "closed" | "bad_frame"

/**
 * A failed command or connection. `code` is the server's `ErrorCode` when the server answered;
 * `disconnected` when the connection dropped before a command that is not safe to resend was
 * answered; `closed` after `close()` or a refused token; `bad_frame` when the server sent
 * something this client cannot decode.
 */
export class PlanbridgeError extends Error {
  override readonly name = "PlanbridgeError"
  constructor(
    readonly code: ClientErrorCode,
    message: string,
    readonly path?: ReadonlyArray<string | number>
  ) {
    super(message)
  }
}

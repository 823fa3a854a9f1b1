/**
 * Whether a node-postgres failure is the loss of the database rather than a refusal by it: the
 * connection broke (a restart, a crash, the network) or the server cannot take connections yet
 * (starting up, shutting down, out of connection slots). Work that failed so can succeed once
 * the database is back, on a new connection; anything else (a constraint, a fenced append, bad
 * SQL) fails the same way again.
 */
export const isConnectionLoss = (cause: unknown): boolean => {
  if (!(cause instanceof Error)) return false
  const code = (cause as { readonly code?: unknown }).code
  if (typeof code === "string") {
    // SQLSTATE class 08: connection exception; 57P01-57P03: admin shutdown, crash shutdown,
    // cannot connect now (starting up, in recovery); 53300: too many connections.
    if (code.startsWith("08") || /^57P0[123]$/.test(code) || code === "53300") return true
    if (NODE_CONNECTION_ERRORS.has(code)) return true
  }
  return NODE_PG_LOSS_MESSAGES.some((message) => cause.message.startsWith(message))
}

/** The socket errors of a connection that broke or could not be made (loopback: no DNS). */
const NODE_CONNECTION_ERRORS = new Set(["ECONNRESET", "ECONNREFUSED", "EPIPE", "ETIMEDOUT", "ECONNABORTED"])

/** What node-postgres itself says when a connection ended under it or cannot be used. */
const NODE_PG_LOSS_MESSAGES = [
  "Connection terminated",
  "Client has encountered a connection error and is not queryable",
  "Client was closed and is not queryable",
  "timeout exceeded when trying to connect"
]

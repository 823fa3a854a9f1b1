import { Cause, Layer, Logger, type LogLevel } from "effect"
import type { FastifyBaseLogger } from "fastify"
import { inspect } from "node:util"

/** pino's method for each of Effect's levels that is a message's severity. */
const methodOf = {
  Fatal: "fatal",
  Error: "error",
  Warn: "warn",
  Info: "info",
  Debug: "debug",
  Trace: "trace"
} as const satisfies Record<LogLevel.Severity, keyof FastifyBaseLogger>

const textOf = (message: unknown): string =>
  (Array.isArray(message) ? message : [message])
    .map((part) => (typeof part === "string" ? part : inspect(part, { depth: 2, breakLength: Infinity })))
    .join(" ")

/**
 * The runtime's own log lines (`Effect.logWarning` in sessions, resume, notifications, replica
 * duties) written by the server's logger: the same destination, level and token scrubbing as
 * every other line of the server (LogHygiene.ts). Effect's default logger writes to the console
 * instead — stdout, which under `planbridge acp` is the editor's ACP channel, so a provider's
 * warning there was a message the editor could not read; and it bypassed the scrubbing.
 */
export const runtimeLogTo = (log: FastifyBaseLogger): Layer.Layer<never> =>
  Logger.layer([
    Logger.make(({ logLevel, message, cause }) => {
      if (logLevel === "All" || logLevel === "None") return
      const text = textOf(message)
      const method = methodOf[logLevel]
      if (cause.reasons.length > 0) log[method]({ cause: Cause.pretty(cause) }, text)
      else log[method](text)
    })
  ])

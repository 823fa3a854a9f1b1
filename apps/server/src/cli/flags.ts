import * as Flag from "effect/cli/Flag"

import { DEFAULT_DATA_DIR } from "./defaults.ts"

export { DEFAULT_DATA_DIR, DEFAULT_PORT } from "./defaults.ts"

/**
 * A flag with a default that `--help` shows. The library's help lists a flag's type and
 * description but not its default, and an operator should not have to read PROTOCOL.md for it.
 */
export const withShownDefault =
  <const B>(value: B, description: string) =>
  <A>(flag: Flag.Flag<A>): Flag.Flag<A | B> =>
    flag.pipe(Flag.withDescription(`${description} (default: ${String(value)})`), Flag.withDefault(value))

/** `--data-dir DIR`: where the SQLite file and the token live. */
export const dataDir = Flag.String("data-dir").pipe(
  withShownDefault(DEFAULT_DATA_DIR, "the data directory: SQLite database and access token")
)

/** `--json`: machine-readable output on stdout (errors still go to stderr). */
export const json = Flag.Boolean("json").pipe(
  withShownDefault(false, "print the result as JSON on stdout; errors go to stderr, stdout stays empty then")
)

/**
 * `--store URL`: keep the event log and projections in PostgreSQL (`postgres://…`) instead of the
 * SQLite file in the data directory; PLANBRIDGE_STORE when absent (see storeOption).
 */
export const store = Flag.String("store").pipe(
  Flag.withDescription(
    "a postgres:// URL: the event log and projections in PostgreSQL, shared by replicas (default: PLANBRIDGE_STORE, else SQLite in the data dir)"
  ),
  Flag.optional
)

/** A text flag that may be absent (`Option.none()`). */
export const optionalText = (name: string, description: string) =>
  Flag.String(name).pipe(Flag.withDescription(description), Flag.optional)

/** A text flag given any number of times, in order. */
export const repeatable = (name: string, description: string) =>
  Flag.String(name).pipe(Flag.withDescription(`${description}; repeatable`), Flag.atLeast(0))

/**
 * `--url URL`: the server a client command talks to; absent, the one running on the data dir,
 * from `<data dir>/server.json` (serverAddress.ts), never an assumed port.
 */
export const serverUrl = optionalText(
  "url",
  "the running server (default: the address the server on --data-dir recorded in <data dir>/server.json)"
)

/** `--credentials`: whose logins providers run with (serve, providers, acp). */
export const credentials = Flag.Literals("credentials", ["user", "isolated"]).pipe(
  Flag.withDescription(
    "whose logins providers run with: user (your own Codex/Claude logins and settings; the default on loopback) " +
      "or isolated (scratch homes, OPENAI_API_KEY/ANTHROPIC_API_KEY; implied by a PLANBRIDGE_*_BASE_URL); " +
      "default: PLANBRIDGE_CREDENTIALS"
  ),
  Flag.optional
)

/** `--acp-agent NAME=COMMAND`, repeatable (serve, providers, acp). */
export const acpAgents = repeatable(
  "acp-agent",
  "NAME=COMMAND: offer an ACP agent as provider NAME, e.g. claude-acp=claude-agent-acp (also <data dir>/acp-agents.json)"
)

import { Schema } from "effect"

/**
 * Who or what ended a prompt, a request or a plan decision:
 * - user: a person answered from a client (the web page, the CLI, a notification's action);
 * - operator: a program on the operator API;
 * - policy: the server's wait policy, on a person's behalf, after its delay;
 * - provider: the provider ended it itself (its process exited, the turn ended, it superseded it);
 * - server: Planbridge ended it (a restart or a stop while it waited, a replica's take-over).
 */
export const ResolutionActor = Schema.Literals(["user", "operator", "policy", "provider", "server"])
export type ResolutionActor = typeof ResolutionActor.Type

/**
 * How the resolution reached the server: a WebSocket client (`ws`), the operator API (`api`),
 * the `planbridge` CLI (`cli`), a notification's action (`push`), or another replica that took
 * it from its client and relayed it to the one running the session (`relay`: the client's own
 * channel is then `relayedVia`).
 */
export const ResolutionVia = Schema.Literals(["ws", "api", "cli", "push", "relay"])
export type ResolutionVia = typeof ResolutionVia.Type

/** A client's own id (`hello.clientId`, the `planbridge-client-id` header), stable per browser or device. */
export const ClientId = Schema.String.check(Schema.isNonEmpty(), Schema.isMaxLength(200))
export type ClientId = typeof ClientId.Type

/**
 * The provenance of one resolution, recorded in its event (`resolvedBy`) and kept by the
 * projections. It never carries an answer: a secret answer stays redacted where the answer is.
 * When it happened is the event's `createdAt`.
 */
export const ResolvedBy = Schema.Struct({
  actor: ResolutionActor,
  /** Absent when nothing came in (the provider or the server ended it). */
  via: Schema.optionalKey(ResolutionVia),
  /** The client that sent it, when it named itself. */
  clientId: Schema.optionalKey(ClientId),
  /** The replica that took it from the client (PostgreSQL replicas; absent on one SQLite server). */
  replica: Schema.optionalKey(Schema.String),
  /** With `via: relay`: the channel the client used on `replica`. */
  relayedVia: Schema.optionalKey(Schema.Literals(["ws", "api", "cli", "push"]))
})
export type ResolvedBy = typeof ResolvedBy.Type

const channelPhrase = {
  ws: "",
  api: " through the operator API",
  cli: " with the CLI",
  push: " from a notification",
  relay: ""
} as const

/**
 * A resolution's provenance as a reader is told it ("by you on this browser", "by the server"),
 * the same words in every client. `ownClientId`: the reader's own client id, so that what this
 * browser or device did reads as "you".
 */
export const resolvedByPhrase = (by: ResolvedBy, ownClientId?: string): string => {
  const channel = by.via === "relay" ? (by.relayedVia ?? "relay") : by.via
  const how = channel === undefined ? "" : channelPhrase[channel]
  switch (by.actor) {
    case "user":
      if (ownClientId !== undefined && by.clientId === ownClientId)
        return channel === "push" ? "by you, from a notification on this device" : "by you on this browser"
      return channel === "ws" ? "by a person on another client" : `by a person${how}`
    case "operator":
      return `by an operator${how}`
    case "policy":
      return "by the server's wait policy"
    case "provider":
      return "by the provider"
    case "server":
      return "by the server"
  }
}

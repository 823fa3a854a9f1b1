import { ClientId, type ResolvedBy } from "@planbridge/contracts"
import { Effect, Schema } from "effect"
import { commandError, type CommandError } from "../orchestration/CommandErrors.ts"

/**
 * Who sent an operator-API request, as its resolutions record it (`resolvedBy`, issue 29):
 * `planbridge-via: cli` is the `planbridge` CLI a person runs, `push` a notification's action
 * (the service worker); without it, a program on the operator API. `planbridge-client-id` is the
 * sender's own stable id, when it has one.
 */
export const VIA_HEADER = "planbridge-via"
export const CLIENT_ID_HEADER = "planbridge-client-id"

const SenderHeaders = Schema.Struct({
  [VIA_HEADER]: Schema.optionalKey(Schema.Literals(["api", "cli", "push"])),
  [CLIENT_ID_HEADER]: Schema.optionalKey(ClientId)
})

/** The sender of a request with these headers; a header with a value it cannot be is refused with its path. */
export const senderOf = (headers: Readonly<Record<string, unknown>>): Effect.Effect<ResolvedBy, CommandError> =>
  Schema.decodeUnknownEffect(SenderHeaders)({
    ...(headers[VIA_HEADER] === undefined ? {} : { [VIA_HEADER]: headers[VIA_HEADER] }),
    ...(headers[CLIENT_ID_HEADER] === undefined ? {} : { [CLIENT_ID_HEADER]: headers[CLIENT_ID_HEADER] })
  }).pipe(
    Effect.mapError((error) => commandError("invalid_frame", `request headers: ${error.message}`)),
    Effect.map((decoded): ResolvedBy => {
      const via = decoded[VIA_HEADER] ?? "api"
      const clientId = decoded[CLIENT_ID_HEADER]
      const actor = via === "api" ? "operator" : "user"
      return clientId === undefined ? { actor, via } : { actor, via, clientId }
    })
  )

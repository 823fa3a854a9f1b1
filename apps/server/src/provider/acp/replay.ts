import type { ThreadId } from "@planbridge/contracts"
import { Effect, Exit, Schema } from "effect"
import { rawOf, type EventDraft } from "../kernel/EventDraft.ts"
import { isJsonRpcId, jsonRpcIdKey } from "../kernel/jsonRpcId.ts"
import { ReplayError } from "../kernel/ReplayError.ts"
import { stampAll, type ReplayMapping } from "../kernel/replay.ts"
import { InvalidLine } from "./native.ts"
import type { Reply } from "./pending.ts"
import { builtinAcpProfiles } from "./profiles/index.ts"
import { AcpTranslator } from "./translator.ts"

/**
 * ACP transcripts (the kernel's one format) replay through the same translator the live session
 * uses. `in`/`out` lines are JSON-RPC messages from and to the agent; `local` lines are
 * `{kind:"invalid",…InvalidLine}` (an agent line that is no message) and
 * `{kind:"exit",exitKind,exitCode,signal}`. Event ids: `<idPrefix>:event:<n>`, the prefix the
 * live session used (the meta line's `idPrefix`) or `<threadId>:r`.
 */

const AcpLocal = Schema.Union([
  Schema.Struct({ kind: Schema.Literal("invalid"), ...InvalidLine.fields }),
  Schema.Struct({
    kind: Schema.Literal("exit"),
    exitKind: Schema.Literals(["graceful", "crashed", "killed", "server_restarted"]),
    exitCode: Schema.NullOr(Schema.Finite),
    signal: Schema.NullOr(Schema.String)
  })
])
const decodeLocal = Schema.decodeUnknownExit(AcpLocal)
const decodeIdPrefix = Schema.decodeUnknownExit(Schema.Struct({ idPrefix: Schema.optionalKey(Schema.String) }))

type JsonObject = Readonly<Record<string, unknown>>
const isRecord = (u: unknown): u is JsonObject => typeof u === "object" && u !== null
const paramOf = (params: unknown, key: string): unknown => (isRecord(params) ? params[key] : undefined)

interface AcpReplayState {
  readonly translator: AcpTranslator
  readonly envelope: { readonly provider: string; readonly threadId: ThreadId }
  /** Our requests by JSON-RPC id, until the agent's response to each. */
  readonly outbound: Map<string, { readonly method: string; readonly params: unknown }>
  initialize: unknown
}

/** The agent's response to a request of ours, as the live session translates it. */
const responseDrafts = (
  state: AcpReplayState,
  request: { readonly method: string; readonly params: unknown },
  msg: JsonObject
): ReadonlyArray<EventDraft> => {
  const { translator } = state
  const { error } = msg
  if (request.method === "initialize") state.initialize = msg.result
  if (error !== undefined && request.method !== "session/prompt") return []
  switch (request.method) {
    case "session/new":
    case "session/load": {
      const resumed = request.method === "session/load"
      const setup =
        resumed && isRecord(msg.result)
          ? { ...msg.result, sessionId: paramOf(request.params, "sessionId") }
          : msg.result
      return translator.configure(state.initialize, setup, {
        cwd: String(paramOf(request.params, "cwd") ?? ""),
        resumed
      })
    }
    case "session/prompt": {
      const message = isRecord(error) && typeof error.message === "string" ? error.message : "error"
      const code = isRecord(error) && typeof error.code === "number" ? error.code : -32603
      return translator.promptFinished(error !== undefined ? { error: { message, code } } : { result: msg.result })
        .drafts
    }
    case "session/set_mode":
    case "session/set_config_option": {
      const nativeMode = paramOf(request.params, request.method === "session/set_mode" ? "modeId" : "value")
      return typeof nativeMode === "string" ? translator.modeSet(request.method, nativeMode, msg.result) : []
    }
  }
  return []
}

/** One JSON-RPC message through the translator: the live session's dispatch, in the transcript's order. */
const messageDrafts = (state: AcpReplayState, dir: "in" | "out", msg: JsonObject): ReadonlyArray<EventDraft> => {
  const { translator, outbound } = state
  const method = typeof msg.method === "string" ? msg.method : undefined
  const id = isJsonRpcId(msg.id) ? msg.id : undefined
  if (dir === "out") {
    if (id === undefined) return []
    if (method === undefined) {
      const reply: Reply =
        "error" in msg ? { error: msg.error as Extract<Reply, { error: unknown }>["error"] } : { result: msg.result }
      return translator.clientResponse(id, reply)
    }
    outbound.set(jsonRpcIdKey(id), { method, params: msg.params })
    return method === "session/prompt" ? translator.startTurn(translator.nextTurnId(), translator.mode, msg.params) : []
  }
  if (method !== undefined)
    return (id !== undefined ? translator.request(id, method, msg.params) : translator.notification(method, msg.params))
      .drafts
  const request = id === undefined ? undefined : outbound.get(jsonRpcIdKey(id))
  if (id === undefined || request === undefined) return []
  outbound.delete(jsonRpcIdKey(id))
  return responseDrafts(state, request, msg)
}

const localDrafts = (translator: AcpTranslator, msg: unknown): ReadonlyArray<EventDraft> | string => {
  const local = decodeLocal(msg)
  if (Exit.isFailure(local)) return `not an ACP local line: ${String(local.cause)}`
  if (local.value.kind === "invalid") {
    const { kind: _kind, ...invalid } = local.value
    return translator.invalidLine(invalid)
  }
  const { exitKind, exitCode, signal } = local.value
  return translator.exited(
    { exitKind, exitCode, signal },
    rawOf("planbridge", "process.exit", { code: exitCode, signal })
  )
}

export const acpReplayMapping: ReplayMapping<AcpReplayState> = {
  label: "ACP",
  accepts: (provider) => builtinAcpProfiles[provider] !== undefined,
  start: (meta, threadId) => {
    const makeProfile = builtinAcpProfiles[meta.provider]
    const prefix = decodeIdPrefix(meta)
    if (makeProfile === undefined || Exit.isFailure(prefix))
      return Effect.fail(new ReplayError({ message: `no ACP profile for provider '${meta.provider}'`, line: 0 }))
    const profile = makeProfile()
    const idPrefix = prefix.value.idPrefix ?? `${threadId}:r`
    const translator = new AcpTranslator(profile, idPrefix)
    const envelope = { provider: profile.provider, threadId }
    return Effect.succeed({
      state: { translator, envelope, outbound: new Map(), initialize: undefined },
      eventId: ({ n }) => `${idPrefix}:event:${n + 1}`
    })
  },
  step: (state, line, ctx) =>
    Effect.suspend(() => {
      const refuse = (message: string) => Effect.fail(new ReplayError({ message, line: ctx.index }))
      const { msg } = line
      try {
        const drafts =
          line.dir === "local"
            ? localDrafts(state.translator, msg)
            : isRecord(msg)
              ? messageDrafts(state, line.dir, msg)
              : "msg is not a JSON-RPC object"
        if (typeof drafts === "string") return refuse(drafts)
        return Effect.succeed({ state, events: stampAll(drafts, ctx, state.envelope) })
      } catch (error) {
        return refuse(`mapping failed: ${String(error)}`)
      }
    })
}

import type { RuntimeEvent, ThreadId } from "@planbridge/contracts"
import { Effect, Exit, Schema } from "effect"
import { rawOf, type EventDraft } from "../kernel/EventDraft.ts"
import { isJsonRpcId, jsonRpcIdKey } from "../kernel/jsonRpcId.ts"
import { ReplayError } from "../kernel/ReplayError.ts"
import { replay, stampAll, type ReplayContext, type ReplayMapping } from "../kernel/replay.ts"
import { InvalidLine } from "./native.ts"
import type { Reply } from "./pending.ts"
import type { AcpProfile } from "./profile.ts"
import { builtinAcpProfiles } from "./profiles/index.ts"
import { AcpTranslator } from "./translator.ts"

/**
 * ACP transcripts (the kernel's one format) replay through the same translator the live session
 * uses. `in`/`out` lines are JSON-RPC messages from and to the agent; `local` lines are
 * `{kind:"invalid",…InvalidLine}` (an agent line that is no message) and
 * `{kind:"exit",exitKind,exitCode,signal}`. Event ids: `<idPrefix>:event:<n>`, the prefix the
 * live session used (the meta line's `idPrefix`) or `<threadId>:r`.
 */

export { ReplayError }

export const AcpLocal = Schema.Union([
  Schema.Struct({ kind: Schema.Literal("invalid"), ...InvalidLine.fields }),
  Schema.Struct({
    kind: Schema.Literal("exit"),
    exitKind: Schema.Literals(["graceful", "crashed", "killed", "server_restarted"]),
    exitCode: Schema.NullOr(Schema.Finite),
    signal: Schema.NullOr(Schema.String)
  })
])
export type AcpLocal = typeof AcpLocal.Type

const decodeLocal = Schema.decodeUnknownExit(AcpLocal)
const IdPrefix = Schema.Struct({ idPrefix: Schema.optionalKey(Schema.String) })
const decodeIdPrefix = Schema.decodeUnknownExit(IdPrefix)

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null
const paramOf = (params: unknown, key: string): unknown => (isRecord(params) ? params[key] : undefined)

interface AcpReplayState {
  readonly profile: AcpProfile
  readonly threadId: ThreadId
  readonly translator: AcpTranslator
  /** Our requests by JSON-RPC id, until the agent's response to each. */
  readonly outbound: Map<string, { readonly method: string; readonly params: unknown }>
  initialize: unknown
}

/** One line through the translator: the live session's dispatch, in the transcript's order. */
const stepLine = (
  state: AcpReplayState,
  line: { readonly dir: "in" | "out"; readonly msg: unknown },
  push: (drafts: ReadonlyArray<EventDraft>) => void,
  refuse: (message: string) => ReplayError
): ReplayError | undefined => {
  const done = undefined
  const msg = line.msg
  if (!isRecord(msg)) return refuse("msg is not a JSON-RPC object")
  const method = typeof msg.method === "string" ? msg.method : undefined
  const id = isJsonRpcId(msg.id) ? msg.id : undefined
  if (line.dir === "out") {
    if (method !== undefined && id !== undefined) {
      state.outbound.set(jsonRpcIdKey(id), { method, params: msg.params })
      if (method === "session/prompt")
        push(state.translator.startTurn(state.translator.nextTurnId(), state.translator.mode, msg.params))
    } else if (method === undefined && id !== undefined) {
      const reply: Reply =
        "error" in msg ? { error: msg.error as { code: number; message: string } } : { result: msg.result }
      push(state.translator.clientResponse(id, reply))
    }
    return done
  }
  if (method !== undefined) {
    push(
      id !== undefined
        ? state.translator.request(id, method, msg.params).drafts
        : state.translator.notification(method, msg.params).drafts
    )
    return done
  }
  if (id === undefined) return done
  const request = state.outbound.get(jsonRpcIdKey(id))
  if (request === undefined) return done
  state.outbound.delete(jsonRpcIdKey(id))
  const failed = "error" in msg
  switch (request.method) {
    case "initialize":
      state.initialize = msg.result
      break
    case "session/new":
    case "session/load": {
      if (failed) break
      const resumed = request.method === "session/load"
      const setup =
        resumed && isRecord(msg.result)
          ? { ...msg.result, sessionId: paramOf(request.params, "sessionId") }
          : msg.result
      push(
        state.translator.configure(state.initialize, setup, {
          cwd: String(paramOf(request.params, "cwd") ?? ""),
          resumed
        })
      )
      break
    }
    case "session/prompt": {
      const error = msg.error
      push(
        state.translator.promptFinished(
          failed
            ? {
                error: {
                  message: isRecord(error) && typeof error.message === "string" ? error.message : "error",
                  ...(isRecord(error) && typeof error.code === "number" ? { code: error.code } : { code: -32603 })
                }
              }
            : { result: msg.result }
        ).drafts
      )
      break
    }
    case "session/set_mode":
    case "session/set_config_option": {
      const nativeMode = paramOf(request.params, request.method === "session/set_mode" ? "modeId" : "value")
      if (!failed && typeof nativeMode === "string")
        push(state.translator.modeSet(request.method, nativeMode, msg.result))
      break
    }
  }
  return done
}

const localLine = (state: AcpReplayState, msg: unknown, ctx: ReplayContext) => {
  const local = decodeLocal(msg)
  if (Exit.isFailure(local))
    return new ReplayError({ message: `not an ACP local line: ${String(local.cause)}`, line: ctx.index })
  const { translator } = state
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
    return Effect.succeed({
      state: { profile, threadId, translator, outbound: new Map(), initialize: undefined },
      eventId: ({ n }) => `${idPrefix}:event:${n + 1}`
    })
  },
  step: (state, line, ctx) =>
    Effect.suspend(() => {
      const events: Array<RuntimeEvent> = []
      const push = (drafts: ReadonlyArray<EventDraft>) =>
        events.push(...stampAll(drafts, ctx, { provider: state.profile.provider, threadId: state.threadId }))
      try {
        if (line.dir === "local") {
          const drafts = localLine(state, line.msg, ctx)
          if (drafts instanceof ReplayError) return Effect.fail(drafts)
          push(drafts)
        } else {
          const refuse = (message: string) => new ReplayError({ message, line: ctx.index })
          const refused = stepLine(state, { dir: line.dir, msg: line.msg }, push, refuse)
          if (refused !== undefined) return Effect.fail(refused)
        }
      } catch (error) {
        return Effect.fail(new ReplayError({ message: `mapping failed: ${String(error)}`, line: ctx.index }))
      }
      return Effect.succeed({ state, events })
    })
}

export const replayTranscript = (lines: ReadonlyArray<unknown>, options: { readonly threadId: ThreadId }) =>
  replay(acpReplayMapping, lines, options)

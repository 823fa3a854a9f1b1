import { EventId, IsoDateTime, type RuntimeEvent, type ThreadId } from "@planbridge/contracts"
import { Effect, Exit, Schema } from "effect"
import { rawOf, stampDraft, type EventDraft } from "../kernel/EventDraft.ts"
import type { Reply } from "./pending.ts"
import { builtinAcpProfiles } from "./profiles/index.ts"
import { TranscriptLine, TranscriptMeta } from "./transcript.ts"
import { AcpTranslator } from "./translator.ts"
import { ReplayError } from "../ReplayError.ts"
import { isJsonRpcId, jsonRpcIdKey } from "../kernel/jsonRpcId.ts"

export { ReplayError }

const decodeMeta = Schema.decodeUnknownExit(TranscriptMeta)
const decodeLine = Schema.decodeUnknownExit(TranscriptLine)

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null
const paramOf = (params: unknown, key: string): unknown => (isRecord(params) ? params[key] : undefined)

/**
 * Replays a recorded ACP transcript through the same translator the live session uses.
 * Ids derive from the transcript (its recorded id prefix, or `<threadId>:r`) and times from
 * `startedAt + ms`, so the output is deterministic and equals what the live session emitted
 * up to event ids and timestamps.
 */
export const replayTranscript = (
  lines: ReadonlyArray<unknown>,
  options: { readonly threadId: ThreadId }
): Effect.Effect<ReadonlyArray<RuntimeEvent>, ReplayError> =>
  Effect.suspend(() => {
    const metaExit = decodeMeta(lines[0])
    if (Exit.isFailure(metaExit))
      return Effect.fail(new ReplayError({ message: `not a transcript meta line: ${String(metaExit.cause)}`, line: 0 }))
    const meta = metaExit.value
    const makeProfile = builtinAcpProfiles[meta.provider]
    if (makeProfile === undefined)
      return Effect.fail(new ReplayError({ message: `no ACP profile for provider '${meta.provider}'`, line: 0 }))
    const started = Date.parse(meta.startedAt)
    if (Number.isNaN(started))
      return Effect.fail(new ReplayError({ message: `startedAt '${meta.startedAt}' is not a date`, line: 0 }))
    const profile = makeProfile()
    const idPrefix = meta.idPrefix ?? `${options.threadId}:r`
    const translator = new AcpTranslator(profile, idPrefix)
    const outbound = new Map<string, { readonly method: string; readonly params: unknown }>()
    let initialize: unknown = undefined
    const events: Array<RuntimeEvent> = []

    for (let index = 1; index < lines.length; index++) {
      const lineExit = decodeLine(lines[index])
      if (Exit.isFailure(lineExit))
        return Effect.fail(new ReplayError({ message: String(lineExit.cause), line: index }))
      const line = lineExit.value
      const createdAt = IsoDateTime.make(new Date(started + line.ms).toISOString())
      const push = (drafts: ReadonlyArray<EventDraft>) => {
        for (const draft of drafts) {
          const eventId = EventId.make(`${idPrefix}:event:${events.length + 1}`)
          events.push(stampDraft(draft, { provider: profile.provider, threadId: options.threadId, eventId, createdAt }))
        }
      }
      try {
        if (line.dir === "exit") {
          push(
            translator.exited(
              { exitKind: line.exitKind, exitCode: line.exitCode, signal: line.signal },
              rawOf("planbridge", "process.exit", { code: line.exitCode, signal: line.signal })
            )
          )
          continue
        }
        if (line.dir === "agent->client:invalid") {
          const { ms: _ms, dir: _dir, ...invalid } = line
          push(translator.invalidLine(invalid))
          continue
        }
        const msg = line.msg
        if (!isRecord(msg))
          return Effect.fail(new ReplayError({ message: "msg is not a JSON-RPC object", line: index }))
        const method = typeof msg.method === "string" ? msg.method : undefined
        const id = isJsonRpcId(msg.id) ? msg.id : undefined
        if (line.dir === "client->agent") {
          if (method !== undefined && id !== undefined) {
            outbound.set(jsonRpcIdKey(id), { method, params: msg.params })
            if (method === "session/prompt")
              push(translator.startTurn(translator.nextTurnId(), translator.mode, msg.params))
          } else if (method === undefined && id !== undefined) {
            const reply: Reply =
              "error" in msg ? { error: msg.error as { code: number; message: string } } : { result: msg.result }
            push(translator.clientResponse(id, reply))
          }
          continue
        }
        if (method !== undefined) {
          push(
            id !== undefined
              ? translator.request(id, method, msg.params).drafts
              : translator.notification(method, msg.params).drafts
          )
          continue
        }
        if (id === undefined) continue
        const request = outbound.get(jsonRpcIdKey(id))
        if (request === undefined) continue
        outbound.delete(jsonRpcIdKey(id))
        const failed = "error" in msg
        switch (request.method) {
          case "initialize":
            initialize = msg.result
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
              translator.configure(initialize, setup, { cwd: String(paramOf(request.params, "cwd") ?? ""), resumed })
            )
            break
          }
          case "session/prompt": {
            const error = msg.error
            push(
              translator.promptFinished(
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
              push(translator.modeSet(request.method, nativeMode, msg.result))
            break
          }
        }
      } catch (error) {
        return Effect.fail(new ReplayError({ message: `mapping failed: ${String(error)}`, line: index }))
      }
    }
    return Effect.succeed(events)
  })

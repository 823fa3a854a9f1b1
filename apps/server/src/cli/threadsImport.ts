import { Effect, Schema } from "effect"
import { Io } from "./CliIo.ts"
import { ExitCode } from "./exitCodes.ts"
import { print, request, run, type PromptsTarget } from "./prompts.ts"

/** `GET /api/providers/:provider/sessions` as this CLI reads it (PROTOCOL.md#operator-http-api). */
export const NativeSessionListBody = Schema.Struct({
  provider: Schema.String,
  sessions: Schema.Array(
    Schema.Struct({
      sessionId: Schema.String,
      cwd: Schema.String,
      title: Schema.optionalKey(Schema.String),
      updatedAt: Schema.optionalKey(Schema.String)
    })
  ),
  truncated: Schema.Boolean,
  takeUpWith: Schema.Literals(["session/resume", "session/load"])
})

/** `POST /api/threads/import`'s answer. */
export const ImportedThread = Schema.Struct({
  threadId: Schema.String,
  nativeSessionId: Schema.String,
  cwd: Schema.String,
  takeUpWith: Schema.Literals(["session/resume", "session/load"])
})

export interface ThreadsImportInput {
  readonly provider: string
  readonly list: boolean
  readonly cwd: string | undefined
  readonly sessionId: string | undefined
  readonly mode: string | undefined
}

const replayNote = (takeUpWith: string) =>
  takeUpWith === "session/resume"
    ? "taken up with session/resume: the agent keeps the history, none is replayed into the thread"
    : "taken up with session/load: the agent replays its history (counted, not shown as events)"

/**
 * `planbridge threads import`: `--list` shows the agent's own sessions (ACP `session/list`);
 * with a SESSION_ID, a new thread takes that session up on the running server.
 */
export const threadsImport = (target: PromptsTarget, input: ThreadsImportInput) =>
  run(
    target,
    Effect.gen(function* () {
      const provider = encodeURIComponent(input.provider)
      if (input.list === (input.sessionId !== undefined)) {
        const io = yield* Io
        io.err(`${target.command}: give either --list or a SESSION_ID to import\n`)
        return ExitCode.usage
      }
      if (input.sessionId === undefined) {
        const query = input.cwd === undefined ? "" : `?${new URLSearchParams({ cwd: input.cwd })}`
        const reply = yield* request(target, "GET", `/api/providers/${provider}/sessions${query}`)
        return yield* print(target, reply, NativeSessionListBody, (body) => {
          const rows = body.sessions.map(
            (s) => `${s.sessionId}  ${s.updatedAt ?? "-"}  ${s.cwd}${s.title === undefined ? "" : `  ${s.title}`}\n`
          )
          const more = body.truncated ? "(more sessions than listed)\n" : ""
          return `${rows.length === 0 ? "no sessions\n" : rows.join("")}${more}${replayNote(body.takeUpWith)}\n`
        })
      }
      const body = {
        provider: input.provider,
        nativeSessionId: input.sessionId,
        ...(input.mode === undefined ? {} : { mode: input.mode })
      }
      const reply = yield* request(target, "POST", "/api/threads/import", body)
      return yield* print(
        target,
        reply,
        ImportedThread,
        (t) => `thread ${t.threadId} on ${t.nativeSessionId} (${t.cwd}); ${replayNote(t.takeUpWith)}\n`
      )
    })
  )

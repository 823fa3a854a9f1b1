import { Effect, Schema } from "effect"
import { hostname } from "node:os"
import { CLIENT_ID_HEADER, VIA_HEADER } from "../http/RequestSender.ts"
import { AuditPage, type AuditEntry } from "../persistence/ResolutionAudit.ts"
import { Io } from "./CliIo.ts"
import { ExitCode } from "./exitCodes.ts"
import { promptCard } from "./promptCard.ts"
import { ErrorBody, PromptDetail, PromptList } from "./promptsApi.ts"
import { promptTable } from "./promptTable.ts"
import { serverUrlFor } from "./serverAddress.ts"
import { clientTokenOf } from "./storedToken.ts"
import { definedFields } from "../util/definedFields.ts"

/**
 * `planbridge prompts list|show|answer|cancel|audit`: the operator API from a terminal. It talks to
 * the running server (an answer must reach the live provider session that asked) with the token
 * from PLANBRIDGE_TOKEN or the data dir. Results go to stdout; every error goes to stderr, as
 * one JSON line `{"error":{code,message}}` under `--json`, so stdout is valid JSON or empty.
 */
export interface PromptsTarget {
  /** `planbridge prompts <action>`, the prefix of every error line. */
  readonly command: string
  /** `--url`; undefined: the server running on the data dir (serverAddress.ts). */
  readonly url: string | undefined
  readonly dataDir: string
  readonly json: boolean
}

interface Reply {
  readonly status: number
  readonly body: unknown
}

/** Why there is no answer to show: the server refused, or there is no server to ask. */
export interface Failure {
  readonly code: string
  readonly message: string
}

export const request = (
  target: PromptsTarget,
  method: "GET" | "POST",
  path: string,
  body?: unknown
): Effect.Effect<Reply, Failure> =>
  Effect.gen(function* () {
    const server = serverUrlFor(target.url, target.dataDir)
    if ("problem" in server) return yield* Effect.fail<Failure>({ code: "no_server", message: server.problem })
    const url = server.url.replace(/\/+$/, "")
    // Read, never created: a new token would match no server.
    const found = yield* Effect.try({
      try: () => clientTokenOf(target.dataDir),
      catch: (error): Failure => ({ code: "no_token", message: `cannot read the token in ${target.dataDir}: ${error}` })
    })
    if ("refusal" in found) {
      return yield* Effect.fail<Failure>({ code: "no_token", message: `${found.refusal}; or set PLANBRIDGE_TOKEN` })
    }
    const token = found.token
    return yield* Effect.tryPromise({
      try: async () => {
        const res = await fetch(`${url}${path}`, {
          method,
          headers: {
            authorization: `Bearer ${token}`,
            // Its answers are recorded as a person's on the CLI of this host (RequestSender.ts).
            [VIA_HEADER]: "cli",
            [CLIENT_ID_HEADER]: `cli@${hostname()}`,
            ...(body === undefined ? {} : { "content-type": "application/json" })
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) })
        })
        const text = await res.text()
        try {
          return { status: res.status, body: JSON.parse(text) as unknown }
        } catch {
          throw new SyntaxError(`HTTP ${res.status} with a body that is not JSON: ${text.slice(0, 200)}`)
        }
      },
      catch: (error): Failure => {
        if (error instanceof SyntaxError) return { code: "bad_response", message: error.message }
        // fetch reports a refused or unroutable connection as a TypeError whose cause names it.
        const cause = String((error as Error).cause ?? error)
        return {
          code: "unreachable",
          message: `no server at ${url} (start it with \`npx planbridge serve\`): ${cause}`
        }
      }
    })
  })

const refusal = (reply: Reply): Failure => {
  const decoded = Schema.decodeUnknownOption(ErrorBody)(reply.body)
  if (decoded._tag === "None") return { code: `http_${reply.status}`, message: "the server refused the request" }
  const body = decoded.value
  return "error" in body ? body.error : { code: body.code ?? `http_${reply.status}`, message: body.message }
}

const fail = (target: PromptsTarget, failure: Failure) =>
  Effect.gen(function* () {
    const io = yield* Io
    if (target.json) io.err(`${JSON.stringify({ error: failure })}\n`)
    else io.err(`${target.command}: ${failure.code}: ${failure.message}\n`)
    return ExitCode.failed
  })

/**
 * Prints a successful reply: the body itself under `--json` (the API's shape is the contract
 * there), otherwise `render` of the body decoded with `schema`.
 */
export const print = <A>(
  target: PromptsTarget,
  reply: Reply,
  schema: Schema.Decoder<A>,
  render: (value: A) => string
) =>
  Effect.gen(function* () {
    if (reply.status !== 200) return yield* fail(target, refusal(reply))
    const io = yield* Io
    if (target.json) {
      io.out(`${JSON.stringify(reply.body, null, 2)}\n`)
      return ExitCode.ok
    }
    const decoded = Schema.decodeUnknownResult(schema)(reply.body)
    if (decoded._tag === "Failure") {
      const message = `the server's reply is not what this CLI reads: ${decoded.failure.message}`
      return yield* fail(target, { code: "bad_response", message })
    }
    io.out(render(decoded.success))
    return ExitCode.ok
  })

export const run = (target: PromptsTarget, effect: Effect.Effect<number, Failure>) =>
  effect.pipe(Effect.catch((failure: Failure) => fail(target, failure)))

export interface ListFilter {
  readonly status?: string
  readonly provider?: string
  readonly thread?: string
}

export const list = (target: PromptsTarget, filter: ListFilter) =>
  run(
    target,
    Effect.gen(function* () {
      const query = new URLSearchParams()
      if (filter.status !== undefined) query.set("status", filter.status)
      if (filter.provider !== undefined) query.set("provider", filter.provider)
      if (filter.thread !== undefined) query.set("threadId", filter.thread)
      const reply = yield* request(target, "GET", query.size === 0 ? "/api/prompts" : `/api/prompts?${query}`)
      const io = yield* Io
      const render = (body: PromptList) => promptTable(body.prompts, { now: new Date(), columns: io.columns() })
      return yield* print(target, reply, PromptList, render)
    })
  )

export const show = (target: PromptsTarget, promptId: string) =>
  run(
    target,
    Effect.gen(function* () {
      const reply = yield* request(target, "GET", `/api/prompts/${encodeURIComponent(promptId)}`)
      return yield* print(target, reply, PromptDetail, (detail) => promptCard(detail, new Date()))
    })
  )

/** `QUESTION=VALUE`, split at the first `=` (the flags' Schema has checked there is one). */
const splitPair = (pair: string): readonly [string, string] => {
  const at = pair.indexOf("=")
  return [pair.slice(0, at), pair.slice(at + 1)]
}

export interface AnswerInput {
  readonly promptId: string
  /** `QUESTION=OPTION`, repeatable: several for one question select several options. */
  readonly options: ReadonlyArray<string>
  /** `QUESTION=TEXT`: the free-form answer (or note) to a question. */
  readonly texts: ReadonlyArray<string>
  readonly clientRequestId: string | undefined
  /** `--skip`: resolve the prompt without an answer (`empty`); only without --option and --text. */
  readonly skip: boolean
}

/**
 * Why these flags are not an answer: none at all would resolve the prompt `empty` as if the
 * user had skipped it, so skipping is said explicitly, and never mixed with an answer.
 */
const answerUsageError = (input: AnswerInput): string | undefined => {
  const given = input.options.length + input.texts.length
  if (input.skip && given > 0) return "--skip resolves the prompt without an answer: give it without --option or --text"
  if (!input.skip && given === 0)
    return "give the answer with --option QUESTION=OPTION or --text QUESTION=TEXT, or --skip to skip the prompt"
  return undefined
}

export const answer = (target: PromptsTarget, input: AnswerInput) =>
  run(
    target,
    Effect.gen(function* () {
      const usage = answerUsageError(input)
      if (usage !== undefined) {
        const io = yield* Io
        io.err(`${target.command}: ${usage}\nRun '${target.command} --help' for its options and examples.\n`)
        return ExitCode.usage
      }
      const byQuestion = new Map<string, { questionId: string; selectedOptionIds?: Array<string>; text?: string }>()
      const entry = (questionId: string) =>
        byQuestion.get(questionId) ?? byQuestion.set(questionId, { questionId }).get(questionId)!
      for (const [questionId, optionId] of input.options.map(splitPair)) {
        const e = entry(questionId)
        e.selectedOptionIds = [...(e.selectedOptionIds ?? []), optionId]
      }
      for (const [questionId, text] of input.texts.map(splitPair)) entry(questionId).text = text
      const body = {
        answers: [...byQuestion.values()],
        ...definedFields({ clientRequestId: input.clientRequestId })
      }
      const reply = yield* request(target, "POST", `/api/prompts/${encodeURIComponent(input.promptId)}/answer`, body)
      const done = input.skip ? "skipped" : "answered"
      return yield* print(target, reply, Schema.Unknown, () => `${done} ${input.promptId}\n`)
    })
  )

export const cancel = (target: PromptsTarget, promptId: string) =>
  run(
    target,
    Effect.gen(function* () {
      const reply = yield* request(target, "POST", `/api/prompts/${encodeURIComponent(promptId)}/cancel`, {})
      return yield* print(target, reply, Schema.Unknown, () => `cancelled ${promptId}\n`)
    })
  )

/** Where a resolution came from, as a line of `prompts audit` says it. */
const byText = (by: AuditEntry["resolvedBy"]): string => {
  if (by === null) return "(not recorded)"
  const via = by.via === undefined ? "" : ` via ${by.via}${by.relayedVia === undefined ? "" : `/${by.relayedVia}`}`
  const client = by.clientId === undefined ? "" : ` client ${by.clientId}`
  const replica = by.replica === undefined ? "" : ` replica ${by.replica}`
  return `${by.actor}${via}${client}${replica}`
}

/** Pages of the trail fetched, at most: the log is read to its end unless it is longer than this. */
const AUDIT_MAX_PAGES = 10_000

/**
 * `planbridge prompts audit [--since ISO]`: who resolved what, in log order, every page of
 * `GET /api/resolutions`; `--json` prints `{"resolutions": [...]}`, the entries as the API has them.
 */
export const audit = (target: PromptsTarget, input: { readonly since: string | undefined }) =>
  run(
    target,
    Effect.gen(function* () {
      const entries: Array<AuditEntry> = []
      let afterSeq: number | null = 0
      for (let page = 0; afterSeq !== null && page < AUDIT_MAX_PAGES; page++) {
        const query = new URLSearchParams({ afterSeq: String(afterSeq) })
        if (input.since !== undefined) query.set("since", input.since)
        const reply = yield* request(target, "GET", `/api/resolutions?${query}`)
        if (reply.status !== 200) return yield* fail(target, refusal(reply))
        const decoded = Schema.decodeUnknownResult(AuditPage)(reply.body)
        if (decoded._tag === "Failure") {
          const message = `the server's reply is not what this CLI reads: ${decoded.failure.message}`
          return yield* fail(target, { code: "bad_response", message })
        }
        entries.push(...decoded.success.entries)
        afterSeq = decoded.success.nextAfterSeq
      }
      const io = yield* Io
      if (target.json) {
        io.out(`${JSON.stringify({ resolutions: entries }, null, 2)}\n`)
        return ExitCode.ok
      }
      for (const e of entries) io.out(`${e.at}  ${e.target} ${e.id}  ${e.resolution}  by ${byText(e.resolvedBy)}\n`)
      if (entries.length === 0) io.out("no resolutions\n")
      return ExitCode.ok
    })
  )

const NotificationStatusBody = Schema.Struct({
  sinks: Schema.Array(Schema.Struct({ sinkId: Schema.String, kind: Schema.String, endpoint: Schema.String })),
  counts: Schema.Struct({ pending: Schema.Int, sent: Schema.Int, failed: Schema.Int }),
  attempts: Schema.Array(
    Schema.Struct({
      notificationId: Schema.String,
      attempt: Schema.Int,
      at: Schema.String,
      replica: Schema.String,
      statusCode: Schema.NullOr(Schema.Int),
      error: Schema.NullOr(Schema.String)
    })
  )
})

/** `planbridge notifications status`: `GET /api/notifications/status`, as text or its JSON. */
export const notificationStatus = (target: PromptsTarget) =>
  run(
    target,
    Effect.gen(function* () {
      const reply = yield* request(target, "GET", "/api/notifications/status")
      return yield* print(target, reply, NotificationStatusBody, (body) => {
        const { pending, sent, failed } = body.counts
        const sinks = body.sinks.map((s) => `  ${s.kind}  ${s.sinkId}  ${s.endpoint}\n`).join("")
        const attempts = body.attempts
          .map(
            (a) => `  ${a.at}  ${a.notificationId} #${a.attempt}  ${a.statusCode ?? a.error ?? "?"}  (${a.replica})\n`
          )
          .join("")
        return (
          `sinks: ${body.sinks.length}\n${sinks}` +
          `notifications: ${pending} pending, ${sent} sent, ${failed} failed\n` +
          `latest attempts:\n${attempts === "" ? "  none\n" : attempts}`
        )
      })
    })
  )

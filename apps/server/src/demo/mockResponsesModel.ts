import {
  openEventStream,
  pieces,
  startScriptedModelServer,
  writeEvent,
  modelRunId,
  writeJson,
  type ScriptedModelServer
} from "./scriptedModelServer.ts"
import { definedFields } from "../util/definedFields.ts"

/**
 * A scripted OpenAI Responses-API model on loopback (`POST /v1/responses`, SSE), for running the
 * real Codex programs offline: `codex app-server` and `codex-acp` both take it as a custom model
 * provider (`base_url = <baseUrl>`, `wire_api = "responses"`). Each `/responses` request
 * consumes the next scripted turn; every request body is logged as received, so a test can
 * assert what the model was really told (e.g. the `function_call_output` carrying the user's
 * answers). Anything else is answered 404 and logged too.
 */

export type ScriptedOutput =
  /**
   * Assistant text, streamed as `output_text.delta` pieces of `chunkSize` characters (default 12).
   * `id` replaces the message's own unique id: a test plays a model service that reuses ids.
   */
  | { readonly type: "text"; readonly text: string; readonly chunkSize?: number; readonly id?: string }
  /**
   * A tool call; `arguments` is JSON-encoded unless it is already a string. `namespace` names the
   * tool's namespace when it is offered inside one (Codex offers an MCP server's tools as the
   * namespace `mcp__<server>`).
   */
  | {
      readonly type: "function_call"
      readonly name: string
      readonly arguments: unknown
      readonly callId?: string
      readonly namespace?: string
    }

export interface ScriptedTurn {
  readonly output: ReadonlyArray<ScriptedOutput>
  /** The stream is held open (after `response.created`) until this settles: lets a test act mid-response. */
  readonly gate?: Promise<void>
}

/** A turn, or a function of the request it answers (to echo what the model was sent). */
export type ScriptedResponse = ScriptedTurn | ((request: LoggedRequest) => ScriptedTurn)

export interface LoggedRequest {
  readonly index: number
  readonly method: string
  readonly path: string
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
  /** The parsed JSON body (the raw text when it is not JSON). */
  readonly body: ResponsesRequest
  /** True when no scripted turn was left and the mock answered with `UNSCRIPTED_TEXT`. */
  readonly unscripted: boolean
}

/** The parts of a Responses request this mock reads; everything else stays in the log as sent. */
export interface ResponsesRequest {
  readonly model?: string
  readonly input?: ReadonlyArray<ResponsesInputItem>
  readonly tools?: ReadonlyArray<{ readonly type?: string; readonly name?: string }>
  readonly [key: string]: unknown
}

export interface ResponsesInputItem {
  readonly type?: string
  readonly role?: string
  readonly call_id?: string
  readonly output?: unknown
  readonly content?: unknown
  readonly [key: string]: unknown
}

/** The shared scripted server, its `baseUrl` being `http://127.0.0.1:PORT/v1` (the provider `base_url`). */
export interface MockResponsesModel extends Omit<
  ScriptedModelServer<LoggedRequest, ScriptedResponse>,
  "mainRequests" | "waitForMainRequests"
> {
  /** The `/responses` requests: those that consume scripted turns. */
  readonly responseRequests: () => ReadonlyArray<LoggedRequest>
  /** Resolves once `count` `/responses` requests have arrived (already-arrived ones count). */
  readonly waitForResponseRequests: (count: number) => Promise<ReadonlyArray<LoggedRequest>>
}

/** Text streamed when a request arrives with nothing scripted: visible in the transcript. */
export const UNSCRIPTED_TEXT = "(mock model: no scripted turn left)"

/** The `function_call_output` items of a request (tool results, answers to questions). */
export const functionCallOutputs = (
  request: LoggedRequest
): ReadonlyArray<{ readonly callId: string; readonly output: unknown }> =>
  (request.body.input ?? [])
    .filter((item) => item.type === "function_call_output")
    .map((item) => ({ callId: String(item.call_id), output: item.output }))

/** The text of the last user message in a request (what the turn was started with). */
export const lastUserText = (request: LoggedRequest): string | undefined => {
  const users = (request.body.input ?? []).filter((item) => item.type === "message" && item.role === "user")
  const content = users.at(-1)?.content
  if (typeof content === "string") return content
  if (!Array.isArray(content)) return undefined
  return content
    .map((part: unknown) => (typeof part === "object" && part !== null && "text" in part ? String(part.text) : ""))
    .join("")
}

/**
 * The SSE events of one response, in the order the real API sends them. Ids are
 * `<kind>_mock_<run>_<request>[_<output>]`: `run` is the model server's (`modelRunId`), so they
 * stay unique across restarts as the real API's do; the counters keep them readable.
 */
export const responseEvents = (
  turn: ScriptedTurn,
  requestIndex: number,
  run: string
): ReadonlyArray<Record<string, unknown>> => {
  const at = `${run}_${requestIndex}`
  const responseId = `resp_mock_${at}`
  const events: Array<Record<string, unknown>> = [
    { type: "response.created", response: { id: responseId, object: "response", status: "in_progress", output: [] } }
  ]
  const output: Array<Record<string, unknown>> = []
  turn.output.forEach((item, outputIndex) => {
    if (item.type === "text") {
      const id = item.id ?? `msg_mock_${at}_${outputIndex}`
      const done = {
        type: "message",
        id,
        role: "assistant",
        status: "completed",
        content: [{ type: "output_text", text: item.text, annotations: [] }]
      }
      const part = { item_id: id, output_index: outputIndex, content_index: 0 }
      events.push({
        type: "response.output_item.added",
        output_index: outputIndex,
        item: { ...done, status: "in_progress", content: [] }
      })
      events.push({
        type: "response.content_part.added",
        ...part,
        part: { type: "output_text", text: "", annotations: [] }
      })
      for (const delta of pieces(item.text, item.chunkSize ?? 12))
        events.push({ type: "response.output_text.delta", ...part, delta })
      events.push({ type: "response.output_text.done", ...part, text: item.text })
      events.push({
        type: "response.content_part.done",
        ...part,
        part: { type: "output_text", text: item.text, annotations: [] }
      })
      events.push({ type: "response.output_item.done", output_index: outputIndex, item: done })
      output.push(done)
    } else {
      const id = `fc_mock_${at}_${outputIndex}`
      const args = typeof item.arguments === "string" ? item.arguments : JSON.stringify(item.arguments)
      const callId = item.callId ?? `call_mock_${at}_${outputIndex}`
      const done = {
        type: "function_call",
        id,
        call_id: callId,
        name: item.name,
        ...(item.namespace === undefined ? {} : { namespace: item.namespace }),
        arguments: args,
        status: "completed"
      }
      events.push({
        type: "response.output_item.added",
        output_index: outputIndex,
        item: { ...done, arguments: "", status: "in_progress" }
      })
      for (const delta of pieces(args, 40))
        events.push({ type: "response.function_call_arguments.delta", item_id: id, output_index: outputIndex, delta })
      events.push({
        type: "response.function_call_arguments.done",
        item_id: id,
        output_index: outputIndex,
        arguments: args
      })
      events.push({ type: "response.output_item.done", output_index: outputIndex, item: done })
      output.push(done)
    }
  })
  events.push({
    type: "response.completed",
    response: {
      id: responseId,
      object: "response",
      status: "completed",
      output,
      usage: {
        input_tokens: 100,
        output_tokens: 20,
        total_tokens: 120,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens_details: { reasoning_tokens: 0 }
      }
    }
  })
  return events
}

const parseBody = (text: string): ResponsesRequest => {
  try {
    return JSON.parse(text) as ResponsesRequest
  } catch {
    return { raw: text }
  }
}

export interface MockResponsesModelOptions {
  /** Answers a request that finds the script empty (default: `UNSCRIPTED_TEXT`); demo mode's scenarios. */
  /** See `ScriptedModelServerOptions.maxLogged`. */
  readonly maxLogged?: number
  readonly unscripted?: (request: LoggedRequest) => ScriptedTurn
}

/**
 * codex-acp 2.6 asks the model for a session title after the first turn (its `TitleGenerator`,
 * a request of its own, on a model of its choosing): answered aside, so it never takes a turn
 * the test scripted for the conversation.
 */
const isTitleRequest = (body: ResponsesRequest): boolean =>
  JSON.stringify(body.input ?? []).includes("generate a very short title for a conversation")
const TITLE_TURN: ScriptedTurn = { output: [{ type: "text", text: '{"title": "Mock title"}' }] }

export const startMockResponsesModel = async (options: MockResponsesModelOptions = {}): Promise<MockResponsesModel> => {
  const run = modelRunId()
  let titles = 0
  const server = await startScriptedModelServer<ResponsesRequest, LoggedRequest, ScriptedResponse, ScriptedTurn>({
    ...definedFields({ maxLogged: options.maxLogged }),
    basePath: "/v1",
    parseBody,
    isMain: ({ method, path, body }) => method === "POST" && path.endsWith("/responses") && !isTitleRequest(body),
    log: (request, unscripted) => ({ ...request, unscripted }),
    turnOf: (next, logged) =>
      next === undefined
        ? (options.unscripted?.(logged) ?? { output: [{ type: "text", text: UNSCRIPTED_TEXT }] })
        : typeof next === "function"
          ? next(logged)
          : next,
    respond: async (res, turn, _logged, mainIndex) => {
      const [created, ...rest] = responseEvents(turn, mainIndex, run)
      openEventStream(res, { connection: "keep-alive" })
      if (created !== undefined) writeEvent(res, created)
      if (turn.gate !== undefined) await turn.gate
      for (const event of rest) writeEvent(res, event)
      res.end()
    },
    respondOther: (res, logged) => {
      if (!isTitleRequest(logged.body)) return writeJson(res, { error: { message: "not mocked" } }, 404)
      openEventStream(res, { connection: "keep-alive" })
      for (const event of responseEvents(TITLE_TURN, titles++, `${run}-title`)) writeEvent(res, event)
      res.end()
    },
    fail: (res, error) => res.writeHead(500).end(String(error))
  })
  return {
    baseUrl: server.baseUrl,
    requests: server.requests,
    responseRequests: server.mainRequests,
    script: server.script,
    waitForResponseRequests: server.waitForMainRequests,
    pending: server.pending,
    close: server.close
  }
}

import type { ConfigLayer, OperatingMode, RawNative, TurnId } from "@planbridge/contracts"
import { Result, Schema } from "effect"
import {
  ConfigReadResult,
  ThreadOpenResult,
  TurnStartParams,
  TurnStartResult,
  type CodexLocal,
  type ConfigReadLayer
} from "./CodexProtocol.ts"
import { lineTooLongMessage, MAX_LINE_BYTES } from "../lines.ts"
import type { CodexLine, CodexMessage, ExitLine } from "./CodexLine.ts"
import { decoded, mapNotification } from "./CodexNotifications.ts"
import { modePermissions } from "./CodexPermissions.ts"
import { endAllRequests, mapClientResponse, mapServerRequest } from "./CodexServerRequests.ts"
import {
  codexCapabilities,
  type ClientRequestRecord,
  type CodexMappingState,
  type Mapped,
  type StepResult
} from "./CodexMappingState.ts"
import { jsonRpcIdKey as idKey } from "../kernel/jsonRpcId.ts"
import { rawOf } from "../kernel/EventDraft.ts"
import { definedFields } from "../../util/definedFields.ts"
import { withEntry, withoutEntry } from "../kernel/immutable.ts"
import { andThen, mapped, stepped, warned } from "../kernel/Mapped.ts"
import { turnFailed } from "../kernel/TurnDrafts.ts"

/**
 * The pure Codex mapping, one `step(state, line) → {state, drafts, replies}` over the decoded
 * line (CodexLine.ts: a message in either direction, an unreadable stdout line, the process
 * exit). The state (CodexMappingState.ts) is never changed in place: each handler returns the
 * next one with its events and the replies owed to Codex, so the runner keeps the old state when
 * the events cannot be recorded. The live session and the kernel's `replay` both drive it, so a
 * recorded transcript replays to exactly the events the live session emitted.
 */

export const nativeMode = (mode: OperatingMode): "plan" | "default" | undefined =>
  mode === "plan" ? "plan" : mode === "default" ? "default" : undefined

const SERVER_RESPONSE = "codex.app-server.response"
const CLIENT_REQUEST = "codex.app-server.client-request"
const STDOUT = "codex.app-server.stdout"

const modeChanged = (s: CodexMappingState, mode: OperatingMode, raw: RawNative): Mapped =>
  s.mode === mode
    ? mapped(s)
    : mapped(
        { ...s, mode },
        { type: "mode.changed", raw, payload: { mode, ...definedFields({ nativeMode: nativeMode(mode) }) } }
      )

const clientMessage = (s: CodexMappingState, c: CodexMessage, msg: unknown): Mapped => {
  if (c.type === "response") return mapClientResponse(s, c)
  if (c.type !== "request") return mapped(s)
  const record = { method: c.method, activeTurnId: s.activeTurnId }
  const next = { ...s, clientRequests: withEntry(s.clientRequests, idKey(c.id), record) }
  if (c.method !== "turn/start") return mapped(next)
  const params = Schema.decodeUnknownResult(TurnStartParams)(c.params)
  const mode = Result.isSuccess(params) ? params.success.collaborationMode?.mode : undefined
  return mode === undefined ? mapped(next) : modeChanged(next, mode, rawOf(CLIENT_REQUEST, c.method, msg))
}

/** A `config/read` layer as `session.configured` names it. */
const configLayer = (layer: ConfigReadLayer): ConfigLayer => {
  const mcpServers = Object.keys(layer.config?.mcp_servers ?? {})
  return {
    name: layer.name.type,
    ...(layer.name.file == null ? {} : { file: layer.name.file }),
    ...(mcpServers.length === 0 ? {} : { mcpServers })
  }
}

/** What a response to one of our requests says, by the request's method. */
const responded = (s: CodexMappingState, request: ClientRequestRecord, result: unknown, raw: RawNative): Mapped => {
  const { method } = request
  const decode = <S extends Schema.Decoder<unknown>>(schema: S, then: (value: S["Type"]) => Mapped) =>
    decoded(schema, (_, value) => then(value))(s, method, result, raw)
  switch (method) {
    case "thread/start":
    case "thread/resume":
      return decode(ThreadOpenResult, ({ thread, model, approvalPolicy, sandbox }) => {
        const applied = approvalPolicy === undefined || sandbox === undefined ? null : { approvalPolicy, sandbox }
        const decision = s.permissions
        const started = {
          cwd: thread.cwd,
          resumed: method === "thread/resume",
          nativeThreadId: thread.id,
          providerVersion: thread.cliVersion
        }
        const configured = {
          capabilities: codexCapabilities,
          mode: s.mode,
          ...definedFields({ nativeMode: nativeMode(s.mode) }),
          model,
          ...(s.configLayers === null ? {} : { configLayers: s.configLayers.map(configLayer) }),
          ...(decision === null || applied === null ? {} : { permissions: modePermissions(decision, applied) })
        }
        return mapped(
          { ...s, nativeThreadId: thread.id, model, applied },
          { type: "session.started", raw, payload: started },
          { type: "session.configured", raw, payload: configured }
        )
      })
    case "config/read":
      return decode(ConfigReadResult, ({ layers }) => mapped({ ...s, configLayers: layers ?? [] }))
    case "turn/start":
      return decode(TurnStartResult, ({ turn }) => {
        const next = { ...s, activeTurnId: turn.id }
        if (request.activeTurnId !== turn.id) return mapped(next)
        // 0.171.0 answers a turn/start during a running turn with that turn: the text became steering input.
        const payload = { code: "codex.steered", message: "the text was added to the running turn as steering input" }
        return mapped(next, { type: "runtime.warning", turnId: turn.id as TurnId, raw, payload })
      })
    default:
      return mapped(s)
  }
}

const response = (s: CodexMappingState, c: Extract<CodexMessage, { type: "response" }>, msg: unknown): Mapped => {
  const key = idKey(c.id)
  const request = s.clientRequests.get(key)
  if (request === undefined) return mapped(s)
  const next = { ...s, clientRequests: withoutEntry(s.clientRequests, key) }
  const raw = rawOf(SERVER_RESPONSE, request.method, msg)
  if (c.error === undefined) return responded(next, request, c.result, raw)
  const payload = {
    code: "codex.request_failed",
    message: `${request.method}: ${c.error.message}`,
    fatal: false,
    detail: { code: c.error.code }
  }
  return mapped(next, { type: "runtime.error", raw, payload })
}

const exited = (s: CodexMappingState, exit: ExitLine["msg"]): Mapped => {
  const raw = rawOf("planbridge", "process/exit", { code: exit.code, signal: exit.signal })
  return andThen(endAllRequests(s, raw), (s) => {
    const { activeTurnId: turnId, fatal } = s
    const failed = turnFailed(turnId as TurnId, fatal ?? "the provider process exited during the turn", raw)
    // Killed for a line over the bound: no crash of Codex's own, but the session did fail.
    const exitKind: "crashed" | "graceful" | "killed" =
      fatal !== null
        ? "crashed"
        : exit.expected || (exit.signal === null && exit.code === 0)
          ? "graceful"
          : exit.signal !== null
            ? "killed"
            : "crashed"
    const info = { exitKind, exitCode: exit.code, signal: exit.signal }
    const ended = { type: "session.exited", raw, payload: fatal !== null ? { ...info, message: fatal } : info } as const
    const next = { ...s, activeTurnId: null, clientRequests: new Map() }
    return turnId === null ? mapped(next, ended) : mapped(next, failed, ended)
  })
}

/** What the transport saw that is no message: the exit, a line over the bound, an unreadable line. */
const local = (s: CodexMappingState, local: CodexLocal): Mapped => {
  switch (local.kind) {
    case "exit":
      return exited(s, local)
    case "permissions":
      return mapped({ ...s, permissions: local })
    case "tooLong": {
      const message = lineTooLongMessage("codex app-server", local.bytes)
      const payload = {
        code: "codex.line_too_long",
        message,
        fatal: true,
        detail: { bytes: local.bytes, limit: MAX_LINE_BYTES }
      }
      return mapped(
        { ...s, fatal: message },
        { type: "runtime.error", raw: rawOf(STDOUT, undefined, local.head), payload }
      )
    }
    case "unreadable":
      return invalid(s, local.reason, local.line)
  }
}

const invalid = (s: CodexMappingState, reason: string, line: string): Mapped => {
  const message = `the provider wrote a line that is not JSON-RPC: ${reason}`
  return warned(s, "codex.invalid_line", message, rawOf(STDOUT, undefined, line), { line: line.slice(0, 4096) })
}

const inbound = (s: CodexMappingState, c: CodexMessage, msg: unknown): Mapped => {
  switch (c.type) {
    case "invalid":
      return invalid(s, c.reason, JSON.stringify(msg))
    case "notification":
      return mapNotification(s, c.method, c.params, msg)
    case "request":
      return mapServerRequest(s, c, msg)
    case "response":
      return response(s, c, msg)
  }
}

export const step = (state: CodexMappingState, line: CodexLine): StepResult =>
  stepped(
    line.dir === "local"
      ? local(state, line.msg)
      : line.dir === "in"
        ? inbound(state, line.message, line.msg)
        : clientMessage(state, line.message, line.msg)
  )

/** `setMode` between turns: Codex modes are per turn, so this is Planbridge's own record of it. */
export const setModeStep = (state: CodexMappingState, mode: OperatingMode): StepResult =>
  stepped(modeChanged(state, mode, rawOf("planbridge", "setMode", { mode })))

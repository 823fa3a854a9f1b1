import type { OperatingMode, TurnId } from "@planbridge/contracts"
import {
  decodeWith,
  type CodexLocal,
  JsonRpcNotification,
  JsonRpcRequest,
  JsonRpcResponse,
  ConfigReadResult,
  ThreadOpenResult,
  TurnStartParams,
  TurnStartResult,
  type JsonRpcId
} from "./CodexProtocol.ts"
import { lineTooLongMessage, MAX_LINE_BYTES } from "../lines.ts"
import { mapNotification } from "./CodexNotifications.ts"
import { modePermissions } from "./CodexPermissions.ts"
import { endAllRequests, mapClientResponse, mapServerRequest } from "./CodexServerRequests.ts"
import {
  codexCapabilities,
  draftOf,
  push,
  update,
  warning,
  type CodexMappingState,
  type Draft,
  type StepResult
} from "./CodexMappingState.ts"
import { jsonRpcIdKey as idKey } from "../kernel/jsonRpcId.ts"
import { rawOf } from "../kernel/EventDraft.ts"
import { definedFields } from "../../util/definedFields.ts"
import { withEntry, withoutEntry } from "../kernel/immutable.ts"

/**
 * The pure Codex mapping: one input (a message in either direction, an unreadable stdout line,
 * the process exit) and the current state in; the next state, the canonical events and any
 * reply the session must send out. The live adapter and the kernel's `replay` both drive it, so
 * a recorded transcript replays to exactly the events the live session emitted.
 */

/** A transcript line (`kernel/transcript.ts`) as the mapping reads it: its `local` message decoded. */
export type MappingInput =
  { readonly dir: "in" | "out"; readonly msg: unknown } | { readonly dir: "local"; readonly msg: CodexLocal }
export type ExitInput = { readonly dir: "local"; readonly msg: Extract<CodexLocal, { readonly kind: "exit" }> }
export const isExit = (input: MappingInput): input is ExitInput => input.dir === "local" && input.msg.kind === "exit"

export type Classified =
  | { readonly type: "request"; readonly id: JsonRpcId; readonly method: string; readonly params?: unknown }
  | { readonly type: "notification"; readonly method: string; readonly params?: unknown }
  | {
      readonly type: "response"
      readonly id: JsonRpcId
      readonly result?: unknown
      readonly error?: { readonly code: number; readonly message: string }
    }
  | { readonly type: "invalid"; readonly reason: string }

/** Which of the JSON-RPC shapes a parsed line is (Codex sends no `jsonrpc` field). */
export const classify = (msg: unknown): Classified => {
  if (typeof msg !== "object" || msg === null || Array.isArray(msg))
    return { type: "invalid", reason: "not a JSON object" }
  if ("method" in msg) {
    if ("id" in msg) {
      const r = decodeWith(JsonRpcRequest, msg)
      return r.ok ? { type: "request", ...r.value } : { type: "invalid", reason: r.message }
    }
    const n = decodeWith(JsonRpcNotification, msg)
    return n.ok ? { type: "notification", ...n.value } : { type: "invalid", reason: n.message }
  }
  const r = decodeWith(JsonRpcResponse, msg)
  return r.ok
    ? { type: "response", ...r.value }
    : { type: "invalid", reason: "neither a request, a notification nor a response" }
}

export const nativeMode = (mode: OperatingMode): "plan" | "default" | undefined =>
  mode === "plan" ? "plan" : mode === "default" ? "default" : undefined

const SERVER_RESPONSE = "codex.app-server.response"
const CLIENT_REQUEST = "codex.app-server.client-request"

const modeChanged = (draft: Draft, mode: OperatingMode, raw: ReturnType<typeof rawOf>) => {
  if (draft.state.mode === mode) return
  update(draft, { mode })
  const native = nativeMode(mode)
  push(draft, { type: "mode.changed", raw, payload: { mode, ...definedFields({ nativeMode: native }) } })
}

const mapClientMessage = (draft: Draft, msg: unknown) => {
  const c = classify(msg)
  if (c.type === "response") return mapClientResponse(draft, c)
  if (c.type !== "request") return
  const record = { method: c.method, params: c.params, activeTurnId: draft.state.activeTurnId }
  update(draft, { clientRequests: withEntry(draft.state.clientRequests, idKey(c.id), record) })
  if (c.method === "turn/start") {
    const params = decodeWith(TurnStartParams, c.params)
    const mode = params.ok ? params.value.collaborationMode?.mode : undefined
    if (mode !== undefined) modeChanged(draft, mode, rawOf(CLIENT_REQUEST, c.method, msg))
  }
}

const mapResponse = (draft: Draft, c: Extract<Classified, { type: "response" }>, msg: unknown) => {
  const key = idKey(c.id)
  const request = draft.state.clientRequests.get(key)
  if (request === undefined) return
  update(draft, { clientRequests: withoutEntry(draft.state.clientRequests, key) })
  const raw = rawOf(SERVER_RESPONSE, request.method, msg)
  if (c.error !== undefined) {
    return push(draft, {
      type: "runtime.error",
      raw,
      payload: {
        code: "codex.request_failed",
        message: `${request.method}: ${c.error.message}`,
        fatal: false,
        detail: { code: c.error.code }
      }
    })
  }
  switch (request.method) {
    case "thread/start":
    case "thread/resume": {
      const d = decodeWith(ThreadOpenResult, c.result)
      if (!d.ok) return warning(draft, "codex.decode_failed", `${request.method}: ${d.message}`, raw)
      const { thread, model, approvalPolicy, sandbox } = d.value
      const applied = approvalPolicy === undefined || sandbox === undefined ? null : { approvalPolicy, sandbox }
      update(draft, { nativeThreadId: thread.id, model, applied })
      const decision = draft.state.permissions
      push(draft, {
        type: "session.started",
        raw,
        payload: {
          cwd: thread.cwd,
          resumed: request.method === "thread/resume",
          nativeThreadId: thread.id,
          providerVersion: thread.cliVersion
        }
      })
      const native = nativeMode(draft.state.mode)
      return push(draft, {
        type: "session.configured",
        raw,
        payload: {
          capabilities: codexCapabilities,
          mode: draft.state.mode,
          ...definedFields({ nativeMode: native }),
          model,
          ...(draft.state.configLayers === null ? {} : { configLayers: draft.state.configLayers }),
          ...(decision === null || applied === null ? {} : { permissions: modePermissions(decision, applied) })
        }
      })
    }
    case "config/read": {
      const d = decodeWith(ConfigReadResult, c.result)
      if (!d.ok) return warning(draft, "codex.decode_failed", `config/read: ${d.message}`, raw)
      const configLayers = (d.value.layers ?? []).map((layer) => {
        const mcpServers = Object.keys(layer.config?.mcp_servers ?? {})
        return {
          name: layer.name.type,
          ...(layer.name.file == null ? {} : { file: layer.name.file }),
          ...(mcpServers.length === 0 ? {} : { mcpServers })
        }
      })
      return update(draft, { configLayers })
    }
    case "turn/start": {
      const d = decodeWith(TurnStartResult, c.result)
      if (!d.ok) return warning(draft, "codex.decode_failed", `turn/start: ${d.message}`, raw)
      const turnId = d.value.turn.id
      if (request.activeTurnId === turnId) {
        // 0.171.0 answers a turn/start during a running turn with that turn: the text became steering input.
        push(draft, {
          type: "runtime.warning",
          turnId: turnId as TurnId,
          raw,
          payload: { code: "codex.steered", message: "the text was added to the running turn as steering input" }
        })
      }
      return update(draft, { activeTurnId: turnId })
    }
    default:
      return
  }
}

const mapExit = (draft: Draft, input: ExitInput["msg"]) => {
  const raw = rawOf("planbridge", "process/exit", { code: input.code, signal: input.signal })
  endAllRequests(draft, raw)
  const turnId = draft.state.activeTurnId
  const fatal = draft.state.fatal
  if (turnId !== null) {
    push(draft, {
      type: "turn.completed",
      turnId: turnId as TurnId,
      raw,
      payload: { status: "failed", error: { message: fatal ?? "the provider process exited during the turn" } }
    })
  }
  // Killed for a line over the bound: no crash of Codex's own, but the session did fail.
  const exitKind: "crashed" | "graceful" | "killed" =
    fatal !== null
      ? "crashed"
      : input.expected
        ? "graceful"
        : input.signal !== null
          ? "killed"
          : input.code === 0
            ? "graceful"
            : "crashed"
  const exit = { exitKind, exitCode: input.code, signal: input.signal }
  const payload = fatal !== null ? { ...exit, message: fatal } : exit
  push(draft, { type: "session.exited", raw, payload })
  update(draft, { activeTurnId: null, clientRequests: new Map() })
}

/** What the transport saw that is no message: the exit, a line over the bound, an unreadable line. */
const mapLocal = (draft: Draft, local: CodexLocal) => {
  switch (local.kind) {
    case "exit":
      return mapExit(draft, local)
    case "permissions":
      return update(draft, { permissions: local })
    case "tooLong": {
      const message = lineTooLongMessage("codex app-server", local.bytes)
      update(draft, { fatal: message })
      const detail = { bytes: local.bytes, limit: MAX_LINE_BYTES }
      const payload = { code: "codex.line_too_long", message, fatal: true, detail }
      return push(draft, {
        type: "runtime.error",
        raw: rawOf("codex.app-server.stdout", undefined, local.head),
        payload
      })
    }
    case "unreadable": {
      const message = `the provider wrote a line that is not JSON-RPC: ${local.reason}`
      const raw = rawOf("codex.app-server.stdout", undefined, local.line)
      return warning(draft, "codex.invalid_line", message, raw, { line: local.line.slice(0, 4096) })
    }
  }
}

export const step = (state: CodexMappingState, input: MappingInput): StepResult => {
  const draft = draftOf(state)
  switch (input.dir) {
    case "out":
      mapClientMessage(draft, input.msg)
      break
    case "local":
      mapLocal(draft, input.msg)
      break
    case "in": {
      const c = classify(input.msg)
      if (c.type === "invalid") {
        const line = JSON.stringify(input.msg)
        warning(
          draft,
          "codex.invalid_line",
          `the provider wrote a line that is not JSON-RPC: ${c.reason}`,
          rawOf("codex.app-server.stdout", undefined, line),
          {
            line: line.slice(0, 4096)
          }
        )
      } else if (c.type === "notification") mapNotification(draft, c.method, c.params, input.msg)
      else if (c.type === "request") mapServerRequest(draft, c, input.msg)
      else mapResponse(draft, c, input.msg)
      break
    }
  }
  return draft
}

/** `setMode` between turns: Codex modes are per turn, so this is Planbridge's own record of it. */
export const setModeStep = (state: CodexMappingState, mode: OperatingMode): StepResult => {
  const draft = draftOf(state)
  modeChanged(draft, mode, rawOf("planbridge", "setMode", { mode }))
  return draft
}

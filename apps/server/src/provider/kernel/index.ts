/**
 * The provider kernel: what the Codex, Claude and ACP adapters share, so that a rule that spans
 * providers is written once.
 *
 * A newcomer's path — a native line becomes a canonical event:
 *  1. Spawn: `ProviderProcess` starts the provider in its own process group under a parent-death
 *     signal and records the group in `ProcessGroups` before the session is reported started.
 *  2. Read: its stdout is read line by line, paced (`inbound.ts` `readLinesPaced`; Claude: the
 *     SDK's read-ahead, `ClaudeProcess.ts`), at most `MAX_LINE_BYTES` a line (`lines.ts`).
 *  3. Decode: each line is checked against the provider's native Schemas (`CodexProtocol.ts`,
 *     `ClaudeNative.ts`, `acp/AcpNative.ts`); a line that does not decode becomes a warning, never
 *     a crash (`warningDraft`).
 *  4. Serialise: one lock per session takes the lines in order (`CodexSessionCore.ts`,
 *     `ClaudeSession.ts` `record`, `acp/AcpSession.ts` `exclusive`).
 *  5. Map: the provider's mapping turns the line into `EventDraft`s, and for requests it decides
 *     the replies (`CodexMapping.step`, `ClaudeMapper.step`, `AcpTranslator`).
 *  6. Stamp: `stampDraft` adds id, provider, thread and time and validates the event against
 *     the contracts' `RuntimeEvent` Schema; an invalid draft becomes a `runtime.error`.
 *  7. Emit: the session's `emit` persists the event (ingestion commits it, then publishes it).
 *  8. Write: only after the emit succeeded are replies written to the provider (a JSON-RPC
 *     response to the request's own id, found through `jsonRpcIdKey`; for Claude, the result
 *     of the SDK callback that waits on it).
 *
 * An answer becomes a native reply:
 *  9. Check: `SessionManager` validates the client's answer once, against the prompt stored when
 *     it was requested (`checkAnswer`); only a `CheckedAnswer` reaches a session.
 * 10. Answer: the session finds its open native request for the prompt (`prompt_not_pending`
 *     otherwise), maps our answer as a line of its own (steps 4–7: the resolution is durable
 *     first), then writes the native reply to that request (step 8).
 *
 * On scope close, `ProviderProcess.shutdown` ends stdin, SIGTERMs the group, waits until no
 * live member remains (bounded), SIGKILLs the group and forgets its record.
 */

export { checkAnswer, type CheckedAnswer } from "./CheckedAnswer.ts"
export { asJson, rawOf, stampDraft, warningDraft, type EventDraft, type Stamp } from "./EventDraft.ts"
export { isJsonRpcId, jsonRpcIdKey, type JsonRpcId } from "./jsonRpcId.ts"
export {
  acquireProviderProcess,
  spawnProviderProcess,
  spawnProviderProcessSync,
  type ProviderProcess,
  type ProviderProcessOptions
} from "./ProviderProcess.ts"

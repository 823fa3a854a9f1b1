/**
 * The provider kernel: what the Codex, Claude and ACP adapters share, so that a rule that spans
 * providers is written once.
 *
 * A newcomer's path — a native line becomes a canonical event (the same ten steps for all three):
 *  1. Spawn: `ProviderProcess` starts the provider in its own process group under a parent-death
 *     signal and records the group in `ProcessGroups` before the session is reported started.
 *  2. Read: its stdout is read line by line, paced, at most `MAX_LINE_BYTES` a line: Codex and
 *     ACP through the one JSON-RPC peer (`JsonRpcPeer`, with the provider's dialect:
 *     `CodexTransport.ts`, `AcpTransport.ts`); Claude through the Agent SDK (`ClaudeProcess.ts`).
 *  3. Line: each becomes a transcript line `{t, dir: in|out|local, msg}` (`transcript.ts`);
 *     what is no message (unreadable, over-long, the exit) is a `local` line, never a crash. Our
 *     own requests, answers and decisions (Claude's callbacks too) are lines as well.
 *  4. Serialise: the provider's `Session` (`Session.ts`, on `SessionRunner.ts`) takes the lines
 *     in order, under one lock: every line waiting at once (a burst, `applyAll`), each keeping its
 *     place in the read-ahead bound until its burst is recorded; the exit is mapped once.
 *  5. Step: the provider's mapping, `step(state, line) → {state, drafts, replies}`
 *     (`CodexMapping.ts`, `ClaudeMapping.ts`, `AcpMapping.ts` on `AcpState.ts`; the helpers of
 *     this one style in `Mapped.ts`, the shared drafts in `TurnDrafts.ts`, `RequestDrafts.ts`),
 *     pure: the same one its replay drives (`replay.ts`), so a recorded transcript reproduces the
 *     live events.
 *  6. Stamp: `stampDraft` adds id, provider, thread and time and validates the event against
 *     the contracts' `RuntimeEvent` Schema; an invalid draft becomes a `runtime.error`.
 *  7. Emit: the session's `emitAll` persists a burst's events in one transaction (ingestion
 *     commits them, then publishes them); if it fails, `emit` one by one, and an event that cannot
 *     be recorded is one `runtime.error` `<provider>.emit_failed`.
 *  8. Write: only then are the replies written to the provider (a JSON-RPC response to the
 *     request's own id, `jsonRpcIdKey`; for Claude, the receipt its waiting `canUseTool` callback is handed).
 *
 * An answer becomes a native reply:
 *  9. Check: `SessionManager` validates the client's answer once, against the prompt stored when
 *     it was requested (`checkAnswer`); only a `CheckedAnswer` reaches a session.
 * 10. Answer: `Answers.ts` finds the session's open native request for the prompt in its mapping
 *     state (`OpenRequests.ts`: the pending, not-pending, busy and cancel-at-turn-end rules, once),
 *     the provider builds only its native reply, and the session applies it as a line of its own
 *     with `Session.answer`, strictly (steps 4–8): if its events cannot be recorded, nothing is
 *     written and the request stays open. Our JSON-RPC
 *     requests go the same way (`callPeer`), their result given once the response is mapped.
 *
 * On scope close, `ProviderProcess.shutdown` ends stdin, SIGTERMs the group, waits until no
 * live member remains (bounded), SIGKILLs the group and forgets its record.
 */

// The kernel's modules are imported by their own paths; this module is their map.
export {}

/** A JSON-RPC request id: the peers we speak to use numbers (Codex, the ACP SDK) or strings. */
export type JsonRpcId = string | number

/** Whether a decoded value can be a JSON-RPC id (`null` cannot be answered by id). */
export const isJsonRpcId = (u: unknown): u is JsonRpcId => typeof u === "string" || typeof u === "number"

/**
 * The Map key of a JSON-RPC id: `1` and `"1"` are different requests, so the type is part of
 * the key. Keys live in memory only; nothing persisted or replayed depends on their spelling.
 */
export const jsonRpcIdKey = (id: JsonRpcId): string => (typeof id === "number" ? `n:${id}` : `s:${id}`)

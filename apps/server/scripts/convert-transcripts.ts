/**
 * Converts the recorded transcripts under `fixtures/` from the three former per-provider formats
 * to the kernel's one format (`src/provider/kernel/transcript.ts`), in place, then replays each
 * and checks that it still yields its golden `<name>.events.jsonl` (which this never writes). Re-runnable: a file
 * already in the one format is left as it is (and still checked).
 *
 *   node apps/server/bin/run-ts.mjs apps/server/scripts/convert-transcripts.ts
 *
 * The former formats: Codex `{t_ms, dir: "c2s"|"s2c", msg|line|tooLong}` with the exit as a
 * `dir: "meta"` line; ACP `{ms, dir: "client->agent"|"agent->client"|"agent->client:invalid"|"exit"}`;
 * Claude SDK messages with `_t` and our `{_local, …, t}` lines.
 */
import type { ThreadId } from "@planbridge/contracts"
import { Effect, Schema } from "effect"
import { isDeepStrictEqual } from "node:util"
import { readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

import { LocalLine } from "../src/provider/claude/ClaudeTranscript.ts"
import { nativeLineOf } from "../src/provider/claude/ClaudeReplay.ts"
import { replayerFor } from "../src/cli/replayers.ts"
import { formatTranscript, parseTranscriptText } from "../src/cli/transcriptFile.ts"
import type { TranscriptLine } from "../src/provider/kernel/transcript.ts"

type Json = Record<string, unknown>
const FIXTURES = resolve(fileURLToPath(new URL("../../../fixtures/", import.meta.url)))

const isConverted = (line: Json): boolean =>
  typeof line.t === "number" && (line.dir === "in" || line.dir === "out" || line.dir === "local")

const codexLine = (line: Json, t: number): Json | undefined => {
  const { dir } = line
  if (dir === "meta") {
    const fields = { ...(line.msg as Json | undefined), ...line }
    const exit = fields.exit
    if (exit === undefined) return undefined
    const { code, signal, expected } =
      typeof exit === "number" ? { code: exit, signal: fields.signal ?? null, expected: false } : (exit as Json)
    return { t, dir: "local", msg: { kind: "exit", code, signal, ...(expected === undefined ? {} : { expected }) } }
  }
  if ("tooLong" in line) return { t, dir: "local", msg: { kind: "tooLong", ...(line.tooLong as Json) } }
  if ("line" in line) return { t, dir: "local", msg: { kind: "unreadable", line: line.line } }
  return { t, dir: dir === "c2s" ? "out" : "in", msg: line.msg }
}

const acpLine = (line: Json): Json => {
  const { ms: t, dir, ...rest } = line
  if (dir === "exit") return { t, dir: "local", msg: { kind: "exit", ...rest } }
  if (dir === "agent->client:invalid") return { t, dir: "local", msg: { kind: "invalid", ...rest } }
  return { t, dir: dir === "client->agent" ? "out" : "in", msg: rest.msg }
}

const claudeLine = (line: Json, index: number): Json => {
  const converted: Json =
    "_local" in line
      ? (({ _local: kind, t, ...fields }) => ({ t, dir: "local", msg: { kind, ...fields } }))(line)
      : (({ _t: t, ...msg }) => ({ t, dir: "in", msg }))(line)
  // The Claude mapping must read the line it read before (a local line, as its Schema decoded it).
  const back = nativeLineOf(converted as TranscriptLine, index)
  const before = "_local" in line ? Schema.decodeUnknownSync(LocalLine)(line) : line
  if (back._tag === "Failure" || JSON.stringify(back.value) !== JSON.stringify(before))
    throw new Error(`line ${index}: does not convert back to the line the mapping read`)
  return converted
}

const convert = (provider: string, lines: ReadonlyArray<Json>): ReadonlyArray<Json> => {
  const [first, ...rest] = lines
  if (first === undefined) throw new Error("empty transcript")
  const meta = provider === "codex" ? { ...(first.msg as Json | undefined), ...first } : first
  delete meta.msg
  // The oldest Codex layout had no start time: ids do not depend on it, times count from 0.
  const out: Array<Json> = [{ ...meta, startedAt: meta.startedAt ?? "1970-01-01T00:00:00.000Z" }]
  let t = 0
  for (const [i, line] of rest.entries()) {
    if (isConverted(line)) {
      out.push(line)
      continue
    }
    if (provider === "codex") {
      t = typeof line.t_ms === "number" ? line.t_ms : t
      const converted = codexLine(line, t)
      if (converted !== undefined) out.push(converted)
    } else if (provider === "claude") out.push(claudeLine(line, i + 1))
    else out.push(acpLine(line))
  }
  return out
}

const dirs = ["codex", "claude", "acp", "cursor"]
const threadIdOf = (dir: string, name: string, golden: string) =>
  (JSON.parse(golden.split("\n")[0]!) as { threadId: string }).threadId ??
  (dir === "codex" ? `codex-fixture-${name}` : `fixture-${name}`)

let failed = false
for (const dir of dirs) {
  for (const file of readdirSync(join(FIXTURES, dir)).filter(
    (f) => f.endsWith(".jsonl") && !f.endsWith(".events.jsonl")
  )) {
    const path = join(FIXTURES, dir, file)
    const parsed = parseTranscriptText(readFileSync(path, "utf8"))
    if ("notJson" in parsed) throw new Error(`${path}:${parsed.notJson}: not JSON`)
    const lines = parsed.lines as ReadonlyArray<Json>
    const converted = convert(String(lines[0]?.provider), lines)
    writeFileSync(path, formatTranscript(converted))
    const name = file.slice(0, -".jsonl".length)
    const goldenPath = join(FIXTURES, dir, `${name}.events.jsonl`)
    const golden = readFileSync(goldenPath, "utf8")
    const replayer = replayerFor(String(converted[0]?.provider))
    if (replayer === undefined) throw new Error(`${path}: no replayer for its provider`)
    const events = Effect.runSync(replayer(converted, { threadId: threadIdOf(dir, name, golden) as ThreadId }))
    // Goldens are compared as JSON values, as the replay tests do (their key order is older).
    const same = isDeepStrictEqual(
      { lines: JSON.parse(JSON.stringify(events)) as unknown },
      parseTranscriptText(golden)
    )
    failed ||= !same
    console.log(`${dir}/${file}: ${lines.length} → ${converted.length} lines, golden ${same ? "identical" : "DIFFERS"}`)
  }
}
if (failed) process.exitCode = 1

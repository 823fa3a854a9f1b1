import { ThreadId, type OperatingMode, type ProviderCapabilities } from "@planbridge/contracts"
import { Effect, Exit, Schema } from "effect"
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { join, resolve } from "node:path"
import { parseTranscriptText } from "../../cli/transcriptFile.ts"
import type { RegisteredProvider } from "../../orchestration/ProviderRegistry.ts"
import { adapterError, type AdapterError } from "../AdapterError.ts"
import { replayLineOf } from "../kernel/ReplayError.ts"
import { TranscriptMeta } from "../kernel/transcript.ts"
import { makeReplayAdapter } from "./ReplayAdapter.ts"
import { replayerFor, type Replayer } from "./replayers.ts"
import { replayCapabilities, type ReplayOptions } from "./ReplaySession.ts"

/**
 * `planbridge serve --replay DIR`: every recorded transcript in DIR (`*.jsonl` in it and in its
 * sub-directories one level down, golden `*.events.jsonl` files skipped) offered as a provider
 * named after its path (`claude/plan-session.jsonl` → `claude-plan-session`). Each is replayed
 * once at start-up, so a transcript that cannot be played stops the server with its path and line.
 */

/** At most this many transcripts in a replay directory, each at most this large. */
export const MAX_REPLAY_TRANSCRIPTS = 256
export const MAX_REPLAY_TRANSCRIPT_BYTES = 16 * 1024 * 1024

/**
 * A replay directory or one of its transcripts that cannot be offered: an `AdapterError`
 * (`invalid_transcript`) whose message starts with the path (and line); `cause`: what refused it.
 */
const refused = (path: string, message: string, cause?: unknown): AdapterError =>
  adapterError("invalid_transcript", `${path}: ${message}`, cause === undefined ? {} : { cause })

/** One transcript, checked and ready to be started as a session. */
export interface Recording {
  /** The provider name it is offered as. */
  readonly name: string
  /** Its path under the directory, e.g. `claude/plan-session.jsonl`. */
  readonly path: string
  /** The recorded provider, from the meta line. */
  readonly recordedProvider: string
  /** The lines to replay: the meta line without `idPrefix`, so ids derive from each session's thread. */
  readonly lines: ReadonlyArray<unknown>
  readonly replay: Replayer
  readonly capabilities: ProviderCapabilities
  readonly recordedMode: OperatingMode
}

const decodeMeta = Schema.decodeUnknownExit(TranscriptMeta)

/** `claude/plan-session.jsonl` → `claude-plan-session`: a provider slug (lowercase, digits, `-`). */
export const recordingName = (path: string): string =>
  path
    .replace(/\.jsonl$/u, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/gu, "-")
    .replace(/^-+|-+$/gu, "")

const transcriptPaths = (dir: string): ReadonlyArray<string> => {
  const isTranscript = (name: string) => name.endsWith(".jsonl") && !name.endsWith(".events.jsonl")
  const found: Array<string> = []
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    if (entry.isFile() && isTranscript(entry.name)) found.push(entry.name)
    if (!entry.isDirectory()) continue
    for (const inner of readdirSync(join(dir, entry.name), { withFileTypes: true })) {
      if (inner.isFile() && isTranscript(inner.name)) found.push(join(entry.name, inner.name))
    }
  }
  return found.sort()
}

const probeThread = ThreadId.make("replay-check")

/** Reads, replays and checks one transcript. */
const loadRecording = (dir: string, path: string): Effect.Effect<Recording, AdapterError> =>
  Effect.gen(function* () {
    const file = join(dir, path)
    const fail = (message: string, line?: number) =>
      Effect.fail(refused(line === undefined ? file : `${file}:${line}`, message))
    const name = recordingName(path)
    if (!/^[a-z][a-z0-9-]{0,63}$/u.test(name))
      return yield* fail(`'${name}' is no provider name (a lowercase letter first, at most 64 characters): rename it`)
    const size = statSync(file).size
    if (size > MAX_REPLAY_TRANSCRIPT_BYTES)
      return yield* fail(`${size} bytes: a transcript may have at most ${MAX_REPLAY_TRANSCRIPT_BYTES}`)
    const parsed = parseTranscriptText(readFileSync(file, "utf8"))
    if ("notJson" in parsed) return yield* fail("not JSON", parsed.notJson)
    const meta = decodeMeta(parsed.lines[0])
    if (Exit.isFailure(meta)) return yield* fail("the first line must be the transcript's meta line", 1)
    const replay = replayerFor(meta.value.provider)
    if (replay === undefined) return yield* fail(`no replayer for provider '${meta.value.provider}'`, 1)
    const { idPrefix: _sessionIds, ...ownMeta } = meta.value
    const lines = [ownMeta, ...parsed.lines.slice(1)]
    const events = yield* replay(lines, { threadId: probeThread }).pipe(
      Effect.mapError((e) => refused(`${file}:${replayLineOf(e) + 1}`, e.message, e))
    )
    const configured = events.find((e) => e.type === "session.configured")
    if (configured?.type !== "session.configured") return yield* fail("the recording has no session.configured")
    return {
      name,
      path,
      recordedProvider: meta.value.provider,
      lines,
      replay,
      capabilities: replayCapabilities(configured.payload.capabilities),
      recordedMode: configured.payload.mode
    }
  })

/** The recordings in `dir`, each checked; the first that is not playable fails it all. */
export const loadReplayDirectory = (dir: string): Effect.Effect<ReadonlyArray<Recording>, AdapterError> =>
  Effect.gen(function* () {
    const root = resolve(dir)
    if (!existsSync(root)) return yield* refused(root, "no such directory")
    const isDir = yield* Effect.try({
      try: () => statSync(root).isDirectory(),
      catch: (e) => refused(root, `cannot read it: ${String(e)}`, e)
    })
    if (!isDir) return yield* refused(root, "not a directory")
    const paths = transcriptPaths(root)
    if (paths.length === 0) return yield* refused(root, "no transcripts (*.jsonl) in it")
    if (paths.length > MAX_REPLAY_TRANSCRIPTS)
      return yield* refused(root, `${paths.length} transcripts: at most ${MAX_REPLAY_TRANSCRIPTS} are offered`)
    const recordings = yield* Effect.forEach(paths, (path) =>
      loadRecording(root, path).pipe(Effect.catchDefect((e) => Effect.fail(refused(join(root, path), String(e), e))))
    )
    const seen = new Map<string, string>()
    for (const r of recordings) {
      const other = seen.get(r.name)
      if (other !== undefined)
        return yield* refused(join(root, r.path), `'${other}' and '${r.path}' would both be provider '${r.name}'`)
      seen.set(r.name, r.path)
    }
    return recordings
  })

/** The recordings as providers a client can start sessions on. */
export const replayProviders = (
  recordings: ReadonlyArray<Recording>,
  options: ReplayOptions
): ReadonlyArray<RegisteredProvider> =>
  recordings.map((recording) => ({
    adapter: makeReplayAdapter(recording, options),
    capabilities: recording.capabilities,
    label: `${recording.path.replace(/\.jsonl$/u, "")} (replay)`
  }))

// `planbridge serve --replay DIR` as the web tests need it, in a process of its own (so that its
// process tree shows what it started): the recordings in REPLAY_DIR as providers, the web client
// built from the current source in WEB_ROOT. Prints `{"url","token"}` once it listens; stops when
// stdin ends.
import { Effect } from "effect"
import { startServer } from "../../../src/http/HttpServer.ts"
import { loadReplayDirectory, replayProviders } from "../../../src/provider/replay/ReplayDirectory.ts"

const [dataDir, webRoot, replayDir] = process.argv.slice(2)
if (dataDir === undefined || webRoot === undefined || replayDir === undefined)
  throw new Error("usage: replayServerProcess.ts DATA_DIR WEB_ROOT REPLAY_DIR")
const recordings = await Effect.runPromise(loadReplayDirectory(replayDir))
const server = await startServer({
  dataDir,
  webRoot,
  host: "127.0.0.1",
  port: 0,
  providers: replayProviders(recordings, { strict: false, speed: 1 }),
  logLevel: "silent"
})
process.stdout.write(`${JSON.stringify({ url: server.url, token: server.token })}\n`)
process.stdin.resume()
process.stdin.once("end", () => void server.close().then(() => process.exit(0)))

// A Planbridge server in a process of its own (tests that need its file descriptors or its
// resource limits): prints `{"port","token"}` as one line once it listens, stops when stdin ends.
import { startServer } from "../../src/http/HttpServer.ts"

const dataDir = process.argv[2]
if (dataDir === undefined) throw new Error("usage: serverProcess.ts DATA_DIR")
const server = await startServer({ dataDir, host: "127.0.0.1", port: 0, providers: [], logLevel: "silent" })
process.stdout.write(`${JSON.stringify({ port: server.port, token: server.token })}\n`)
process.stdin.resume()
process.stdin.once("end", () => void server.close().then(() => process.exit(0)))

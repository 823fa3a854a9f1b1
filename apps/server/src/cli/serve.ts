import { startServer, ServerStartError } from "../http/HttpServer.ts"
import { parseCommandArgs, registerCommand } from "./main.ts"
import { providersFromEnv } from "./providersFromEnv.ts"

export const DEFAULT_PORT = 4317

/** `planbridge serve [--host] [--port] [--data-dir] [--token] [--allow-origin URL]…` */
registerCommand(
  "serve",
  async (args) => {
    const { values } = parseCommandArgs(args, {
      host: { type: "string", default: "127.0.0.1" },
      port: { type: "string", default: String(DEFAULT_PORT) },
      token: { type: "string" },
      "allow-origin": { type: "string", multiple: true },
      "log-level": { type: "string", default: "info" }
    })
    const port = Number(values.port)
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      process.stderr.write(`planbridge serve: --port must be an integer between 0 and 65535, got '${values.port}'\n`)
      return 2
    }
    const logLevel = values["log-level"]
    if (logLevel !== "silent" && logLevel !== "error" && logLevel !== "warn" && logLevel !== "info" && logLevel !== "debug") {
      process.stderr.write(`planbridge serve: --log-level must be silent, error, warn, info or debug\n`)
      return 2
    }
    const token = values.token ?? process.env.PLANBRIDGE_TOKEN
    try {
      const server = await startServer({
        dataDir: values["data-dir"],
        host: values.host,
        port,
        ...(token === undefined ? {} : { token }),
        ...(values["allow-origin"] === undefined ? {} : { allowedOrigins: values["allow-origin"] }),
        providers: providersFromEnv(process.env),
        logLevel
      })
      process.stdout.write(
        `planbridge listening on ${server.url} (data dir ${values["data-dir"]}); ` +
          `recovered ${server.recovery.prompts} prompts, ${server.recovery.sessions} sessions; ` +
          `token: planbridge token --data-dir ${values["data-dir"]}\n`
      )
      await new Promise<void>((resolve) => {
        const stop = () => resolve()
        process.once("SIGINT", stop)
        process.once("SIGTERM", stop)
      })
      await server.close()
      return 0
    } catch (error) {
      if (error instanceof ServerStartError) {
        process.stderr.write(`planbridge serve: ${error.message}\n`)
        return 2
      }
      throw error
    }
  },
  "run the server (WebSocket on /ws, operator API on /api), bound to 127.0.0.1 by default"
)

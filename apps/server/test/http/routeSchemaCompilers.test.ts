import { mkdtempSync, rmSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import Fastify, { type FastifySchema } from "fastify"
import { startServer, type RunningServer } from "../../src/http/HttpServer.ts"
import { NO_ROUTE_SCHEMAS } from "../../src/http/RouteSchemas.ts"

/**
 * Routes take no JSON schema (Effect Schema decodes every boundary), so the server gives Fastify
 * compilers of its own that refuse one, and Fastify's defaults (ajv, fast-json-stringify: ~0.8 MB
 * of JavaScript, loaded by `fastify()` itself) stay unloaded: part of `serve`'s start-up (issue 17).
 */
const scratch = mkdtempSync(join(tmpdir(), "planbridge-compilers-"))
let server: RunningServer | undefined

afterAll(async () => {
  await server?.close()
  rmSync(scratch, { recursive: true, force: true })
})

describe("Fastify's JSON-schema compilers", () => {
  it("are not loaded by a running server that has answered an API call", async () => {
    server = await startServer({ host: "127.0.0.1", port: 0, providers: [], logLevel: "silent", dataDir: scratch })
    const health = await fetch(`${server.url}/api/threads`, { headers: { authorization: `Bearer ${server.token}` } })
    expect(health.status).toBe(200)
    const loaded = Object.keys(createRequire(import.meta.url).cache)
    expect(loaded.some((path) => path.includes("/node_modules/fastify/"))).toBe(true)
    // Fastify's own error serializer uses fast-json-stringify's small runtime (lib/), not its compiler.
    const compilers =
      /@fastify\/(ajv-compiler|fast-json-stringify-compiler)\/|\/node_modules\/ajv\/|fast-json-stringify\/index\.js/
    expect(loaded.filter((path) => compilers.test(path))).toEqual([])
  })

  it("refuse a route that declares a schema to validate or serialize with, naming it; accept one that declares neither", async () => {
    const validated = Fastify({ schemaController: NO_ROUTE_SCHEMAS })
    validated.post("/things", { schema: { body: { type: "object" } } }, () => "ok")
    await expect(validated.ready()).rejects.toThrow(/POST \/things: routes take no JSON schema here/)
    const serialized = Fastify({ schemaController: NO_ROUTE_SCHEMAS })
    serialized.get("/things", { schema: { response: { 200: { type: "string" } } } }, () => "ok")
    await expect(serialized.ready()).rejects.toThrow(/GET \/things: routes take no JSON schema here/)
    // As @fastify/static declares its routes (`hide` is a documentation key Fastify's types do not list).
    const hidden = Fastify({ schemaController: NO_ROUTE_SCHEMAS })
    hidden.get("/file", { schema: { hide: true } as FastifySchema }, () => "ok")
    expect((await hidden.inject({ method: "GET", url: "/file" })).body).toBe("ok")
    await Promise.all([validated.close(), serialized.close(), hidden.close()])
  })
})

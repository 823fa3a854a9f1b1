import fastifyStatic from "@fastify/static"
import type { FastifyInstance, FastifyReply } from "fastify"
import { existsSync } from "node:fs"
import { basename, join, resolve } from "node:path"

/**
 * The reference web client (`apps/web`, built by Vite into `apps/web/dist`) served at `/`.
 * Static files need no token: they hold none and do nothing; the page takes the token from the
 * URL fragment and sends it on `/ws` and `/api`, which keep requiring it. Strict headers: the
 * page may load only its own files and talk only to this server.
 */

/** `apps/web/dist`, from this file (`apps/server/src/http/`) and from a compiled copy beside it alike. */
export const DEFAULT_WEB_ROOT = resolve(import.meta.dirname, "../../../web/dist")

/** Paths that are the API or the WebSocket: never static, always behind the token. */
export const isApiPath = (url: string): boolean => {
  const path = url.split("?")[0] ?? url
  return path === "/ws" || path === "/api" || path.startsWith("/api/")
}

/**
 * The page's Content-Security-Policy. `connect-src` names the WebSocket of the host the page was
 * served from (already checked against the Host allowlist): `'self'` does not cover `ws:` in
 * every browser.
 */
const contentSecurityPolicy = (host: string | undefined): string =>
  [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    // wss as well: behind a TLS proxy (a phone, README.md) the page's socket is wss.
    `connect-src 'self'${host === undefined ? "" : ` ws://${host} wss://${host}`}`,
    "manifest-src 'self'",
    // The service worker (sw.js) makes the page installable and answers from notifications.
    "worker-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
    "object-src 'none'"
  ].join("; ")

const securityHeaders = (reply: FastifyReply): void => {
  void reply.header("content-security-policy", contentSecurityPolicy(reply.request.headers.host))
  void reply.header("x-content-type-options", "nosniff")
  void reply.header("referrer-policy", "no-referrer")
  void reply.header("x-frame-options", "DENY")
  void reply.header("cross-origin-opener-policy", "same-origin")
}

/**
 * `index.html` names the current bundle and must never be cached; Vite's hashed assets never
 * change under their name and may be cached for good.
 */
const cacheControlFor = (path: string): string =>
  basename(path) === "index.html" || !path.includes(`${join("/", "assets", "/")}`)
    ? "no-store"
    : "public, max-age=31536000, immutable"

const NOT_BUILT_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Planbridge: web UI not built</title></head>
<body><h1>Planbridge is running</h1>
<p>The web UI has not been built. From the repository root run <code>npm run build</code>
(<code>npm ci</code> builds it too) and reload this page.</p>
<p>The WebSocket API is on <code>/ws</code> and the operator API under <code>/api</code>; both need the token
(<code>planbridge token</code>).</p></body></html>
`

export const registerWebUi = async (app: FastifyInstance, root: string): Promise<void> => {
  if (!existsSync(join(root, "index.html"))) {
    app.get("/", (_req, reply) => {
      securityHeaders(reply)
      return reply.header("cache-control", "no-store").type("text/html; charset=utf-8").send(NOT_BUILT_PAGE)
    })
    return
  }
  await app.register(fastifyStatic, {
    root,
    prefix: "/",
    index: "index.html",
    wildcard: true,
    cacheControl: false,
    // Vite writes no dotfiles; one left in the build directory (an editor's, a tool's) is not served.
    dotfiles: "deny",
    setHeaders: (reply, path) => {
      securityHeaders(reply)
      void reply.header("cache-control", cacheControlFor(path))
    }
  })
}

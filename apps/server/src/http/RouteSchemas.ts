import type { FastifyServerOptions } from "fastify"

/** A route-schema compiler that refuses: what Fastify calls to compile a route's JSON schema. */
const refuseRouteSchema = () => (route: { readonly method?: string; readonly url?: string }) => {
  throw new Error(
    `${route.method ?? "?"} ${route.url ?? "?"}: routes take no JSON schema here; decode with Effect Schema`
  )
}

/**
 * Fastify's `schemaController`: routes declare no JSON schemas, every boundary decodes with
 * Effect Schema. Fastify loads its default compilers (ajv and fast-json-stringify, ~0.8 MB of
 * JavaScript, ~80 ms of `serve`'s start-up) unless it is given its own; these refuse, so a route
 * that declared a schema to validate or serialize with fails to register, by name, instead of
 * being checked by a second schema language. A schema with neither (`{ hide: true }`, as
 * @fastify/static gives its routes) compiles nothing and is accepted.
 */
export const NO_ROUTE_SCHEMAS: NonNullable<FastifyServerOptions["schemaController"]> = {
  compilersFactory: { buildValidator: refuseRouteSchema, buildSerializer: refuseRouteSchema }
}

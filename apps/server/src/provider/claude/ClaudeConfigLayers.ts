import type { ConfigLayer } from "@planbridge/contracts"

/**
 * The setting sources as layers, each with the MCP servers defined in its scope; servers from
 * any other scope (`plugin`, `dynamic`, …) get a layer named after it.
 */
export const configLayers = (
  sources: ReadonlyArray<string>,
  servers: ReadonlyArray<{ readonly name: string; readonly source?: string }>
): Array<ConfigLayer> => {
  const scopeOf = (server: { readonly source?: string }) => server.source ?? "unknown"
  const names = [...sources, ...new Set(servers.map(scopeOf).filter((scope) => !sources.includes(scope)))]
  return names.map((name) => {
    const mcpServers = servers.filter((server) => scopeOf(server) === name).map((server) => server.name)
    return { name, ...(mcpServers.length === 0 ? {} : { mcpServers }) }
  })
}

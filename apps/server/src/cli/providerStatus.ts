import type { ProviderInfo } from "@planbridge/contracts"

/**
 * Providers as a table, one line each: its kind, ready or not, how it is logged in, and what to
 * do when it is not (`planbridge serve` once the probes answered, `planbridge providers`).
 */
export const describeStatuses = (infos: ReadonlyArray<ProviderInfo>): string => {
  const line = (info: ProviderInfo) => {
    const ready = info.ready === undefined ? "" : info.ready ? "ready" : "not ready"
    const auth = info.auth
    const how =
      auth === undefined
        ? ""
        : [auth.status, auth.method, auth.label === undefined ? undefined : `(${auth.label})`]
            .filter((part) => part !== undefined)
            .join(" ")
    const hint = auth?.hint === undefined ? "" : ` — ${auth.hint}`
    return `  ${info.provider.padEnd(12)} ${ready.padEnd(9)} ${how}${hint}`.trimEnd() + "\n"
  }
  return `provider status:\n${infos.map(line).join("")}`
}

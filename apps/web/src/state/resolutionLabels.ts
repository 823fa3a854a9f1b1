/**
 * What a prompt's or a request's resolution code means, in words: badges never show a raw code
 * (`provider_exited`). A code this client does not know yet is shown as it is.
 */
const labels: Readonly<Record<string, string>> = {
  answered: "answered",
  responded: "answered",
  empty: "skipped",
  cancelled: "cancelled",
  expired: "expired",
  superseded: "replaced by a newer one",
  provider_exited: "the agent stopped",
  server_restarted: "the server restarted",
  server_stopped: "the server was stopped",
  refused: "refused by the agent"
}

export const resolutionLabel = (code: string | null): string => (code === null ? "resolved" : (labels[code] ?? code))

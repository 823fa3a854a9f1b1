import type { ProviderAuth } from "@planbridge/contracts"
import { Effect } from "effect"
import { tmpdir } from "node:os"
import { authProbe } from "../kernel/authProbe.ts"
import { initializedBareAgent } from "./AcpHandshake.ts"
import type * as N from "./AcpNative.ts"
import type { AcpProfile } from "./AcpProfile.ts"

/**
 * What an ACP agent says about logging in, from `initialize` alone (no session, so no MCP
 * server and no model call): its `authMethods`. An agent lists its methods whether or not the
 * user is already logged in, so a listed method means `unknown`, with the methods as the hint;
 * an agent that lists none asks for no login.
 */
const authFromMethods = (init: N.InitializeResponse, label: string): ProviderAuth => {
  const methods = init.authMethods ?? []
  const info = init.agentInfo ?? undefined
  const name = info === undefined ? label : `${info.name} ${info.version ?? ""}`.trim()
  if (methods.length === 0) return { status: "authenticated", method: "none", label: `${name} asks for no login` }
  return {
    status: "unknown",
    method: methods.map((m) => m.id).join(","),
    label: name,
    hint: `if a session fails to start, log in to ${label}: ${methods.map((m) => m.name ?? m.id).join(" or ")}`
  }
}

export const probeAcpAuth = (
  profile: AcpProfile,
  env: Readonly<Record<string, string | undefined>>
): Effect.Effect<ProviderAuth> =>
  authProbe(
    `${profile.label} did not start`,
    Effect.map(initializedBareAgent(profile, env, tmpdir()), ({ init }) => authFromMethods(init, profile.label))
  )

import { networkInterfaces } from "node:os"

/**
 * Real-peer tests call this first: they must run inside the loopback-only network namespace
 * that `npm test` creates (scripts/in-loopback-netns.sh), and fail loudly anywhere else rather
 * than let a provider program reach the network.
 */
export const assertLoopbackOnly = (): void => {
  const names = Object.keys(networkInterfaces())
  const foreign = names.filter((name) => name !== "lo")
  if (process.env.PLANBRIDGE_IN_NETNS !== "1" || foreign.length > 0) {
    throw new Error(
      `real-peer tests must run in a loopback-only network namespace (npm test does this); ` +
        `interfaces here: ${names.join(", ")}`
    )
  }
}

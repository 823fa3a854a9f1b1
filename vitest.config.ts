import { defineConfig } from "vitest/config"

export default defineConfig({
  // Tests import the workspace packages' sources (tsconfig.json's `paths`), never a stale build.
  resolve: { tsconfigPaths: true },
  test: {
    include: ["packages/*/test/**/*.test.ts", "apps/*/test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // A `planbridge` a test spawns runs the sources under test, never a build that may be stale.
    env: { PLANBRIDGE_FROM_SOURCE: "1" }
  }
})

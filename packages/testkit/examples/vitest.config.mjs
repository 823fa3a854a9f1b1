// The kit's examples as a user's project runs them: vitest on plain .mjs files, importing the
// built @planbridge/testkit and @planbridge/client through their package.json exports.
import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    root: import.meta.dirname,
    include: ["*.test.mjs"],
    testTimeout: 60_000,
    hookTimeout: 60_000
  }
})

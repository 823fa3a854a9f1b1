import { describe, expect, it } from "vitest"
import { providersFromEnv } from "../../src/cli/providersFromEnv.ts"

describe("providers offered by planbridge serve", () => {
  it("offers exactly the providers whose credentials are configured, with their capabilities", () => {
    expect(providersFromEnv({})).toEqual([])
    const all = providersFromEnv({ OPENAI_API_KEY: "k", ANTHROPIC_API_KEY: "k", CURSOR_API_KEY: "k" })
    expect(all.map((p) => p.adapter.provider)).toEqual(["codex", "claude", "cursor"])
    expect(all.map((p) => p.capabilities.supportsAskMode)).toEqual([false, false, true])
    expect(providersFromEnv({ OPENAI_API_KEY: "" })).toEqual([])
  })
})

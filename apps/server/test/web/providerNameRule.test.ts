import { ESLint } from "eslint"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

/**
 * The web client renders from capabilities only: the lint rule in eslint.config.js refuses any
 * provider name in apps/web/src (string, template or JSX text), and nowhere else.
 */
const root = fileURLToPath(new URL("../../../..", import.meta.url))
const eslint = new ESLint({ cwd: root })

const messagesOf = async (code: string, filePath: string) => {
  const [result] = await eslint.lintText(code, { filePath })
  return (result?.messages ?? []).filter((m) => m.ruleId === "no-restricted-syntax").map((m) => m.message)
}

describe("the web client never branches on a provider's name", () => {
  it("fires on a name in a string, a template or JSX text under apps/web/src", async () => {
    const code = [
      `export const a = (p: { provider: string }) => p.provider === "codex"`,
      "export const b = (p: string) => `${p}-Claude`",
      `export const c = () => <span>Cursor</span>`
    ].join("\n")
    const messages = await messagesOf(code, `${root}apps/web/src/components/Example.tsx`)
    expect(messages).toHaveLength(3)
    expect(messages[0]).toContain("capabilities")
  })

  it("stays quiet on capability-driven code and outside apps/web", async () => {
    const capabilityCode = `export const a = (c: { supportsPlanMode: boolean }) => (c.supportsPlanMode ? "plan" : "default")`
    expect(await messagesOf(capabilityCode, `${root}apps/web/src/components/Example.tsx`)).toEqual([])
    expect(await messagesOf(`export const k = "codex"`, `${root}apps/server/src/Example.ts`)).toEqual([])
  })

  it("the shipped web client passes it", async () => {
    const results = await eslint.lintFiles([`${root}apps/web/src`])
    const restricted = results.flatMap((r) => r.messages.filter((m) => m.ruleId === "no-restricted-syntax"))
    expect(results.length).toBeGreaterThan(10)
    expect(restricted).toEqual([])
  })
})

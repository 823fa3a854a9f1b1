import { spawnSync } from "node:child_process"
import { rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"

/**
 * `npm run lint` checks formatting (prettier, width 120, the repository's .prettierrc.json): an
 * unformatted source file under the tree fails the check, the same file formatted passes.
 */
const root = fileURLToPath(new URL("../../../../", import.meta.url))
const prettier = join(root, "node_modules/.bin/prettier")
const file = join(root, "apps/server/test/tooling/unformatted.tmp.ts")
afterEach(() => rmSync(file, { force: true }))

const check = () => spawnSync(prettier, ["--check", file], { cwd: root, encoding: "utf8" })

describe("formatting is enforced", () => {
  it("fails the check on an unformatted file and passes once it is formatted", () => {
    writeFileSync(file, "export const  x = {a:1,\n  b : 'two'};\n")
    const before = check()
    expect(before.status).toBe(1)
    expect(before.stderr + before.stdout).toContain("unformatted.tmp.ts")
    expect(spawnSync(prettier, ["--write", file], { cwd: root }).status).toBe(0)
    expect(check().status).toBe(0)
  })
})

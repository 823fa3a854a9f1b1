import { describe, expect, it } from "vitest"
import { definedFields } from "../../src/util/definedFields.ts"

describe("definedFields", () => {
  it("keeps defined members (null, 0, '' and false included) and drops undefined ones", () => {
    const path: ReadonlyArray<string> | undefined = undefined
    const fields = definedFields({ code: "busy", path, turnId: null, n: 0, text: "", flag: false })
    expect(fields).toEqual({ code: "busy", turnId: null, n: 0, text: "", flag: false })
    expect(Object.keys(fields)).not.toContain("path")
  })

  it("types a maybe-undefined member as optional without undefined (exactOptionalPropertyTypes)", () => {
    const error = (path: ReadonlyArray<string> | undefined): { code: string; path?: ReadonlyArray<string> } => ({
      code: "invalid_answer",
      ...definedFields({ path })
    })
    expect(error(["answers", "0"])).toEqual({ code: "invalid_answer", path: ["answers", "0"] })
    expect("path" in error(undefined)).toBe(false)
  })
})

import { describe, expect, it } from "vitest"
import { storeError } from "../../src/persistence/StoreError.ts"
import { describeCause } from "../../src/util/describeCause.ts"

describe("describeCause", () => {
  it("gives an error's message, a string as it is, an object's message", () => {
    expect(describeCause(new Error("disk full"))).toBe("disk full")
    expect(describeCause("no such table")).toBe("no such table")
    expect(describeCause({ message: "connection reset", code: "ECONNRESET" })).toBe("connection reset")
  })

  it("never throws, and shows what an object holds", () => {
    const bare = Object.assign(Object.create(null) as object, { code: "23503", table: "items" })
    expect(() => String(bare)).toThrow(TypeError)
    expect(describeCause(bare)).toContain("23503")
    expect(describeCause({ code: 42 })).toBe("{ code: 42 }")
    expect(describeCause(undefined)).toBe("undefined")
  })

  it("a store error caused by an object without a prototype has a message", () => {
    const bare = Object.assign(Object.create(null) as object, { detail: "violates foreign key" })
    const error = storeError("write", { operation: "rebuild the projections", cause: bare })
    expect(error.message).toContain("cannot rebuild the projections: ")
    expect(error.message).toContain("violates foreign key")
  })
})

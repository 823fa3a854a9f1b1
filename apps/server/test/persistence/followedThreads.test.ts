import { describe, expect, it } from "vitest"
import { makeFollowedThreads } from "../../src/persistence/FollowedThreads.ts"

describe("FollowedThreads", () => {
  it("counts every thread until the process opts in; then a thread while one of its follows holds, every thread while a follow of every thread holds", () => {
    const followed = makeFollowedThreads()
    expect(followed.publishes("a")).toBe(true)
    followed.optIn()
    expect(followed.publishes("a")).toBe(false)
    const first = followed.follow("a")
    const second = followed.follow("a")
    first()
    first()
    expect(followed.publishes("a")).toBe(true)
    second()
    expect(followed.publishes("a")).toBe(false)
    const every = followed.followEvery()
    expect(followed.publishes("b")).toBe(true)
    every()
    every()
    expect(followed.publishes("b")).toBe(false)
    const again = followed.followEvery()
    expect(followed.publishes("b")).toBe(true)
    again()
  })
})

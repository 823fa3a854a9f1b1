import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { UserInputAnswer, UserInputPrompt, redactAnswerEntries, validateAnswer } from "../src/index.ts"

const prompt = Schema.decodeUnknownSync(UserInputPrompt)({
  promptId: "p1",
  source: "native",
  blocking: true,
  questions: [
    {
      id: "db",
      label: "Which database?",
      options: [
        { id: "pg", label: "PostgreSQL" },
        { id: "sqlite", label: "SQLite" }
      ],
      multiSelect: false,
      allowFreeform: true,
      secret: false,
      required: true
    },
    {
      id: "extras",
      label: "Extras?",
      options: [
        { id: "colors", label: "Colors" },
        { id: "emoji", label: "Emoji" }
      ],
      multiSelect: true,
      allowFreeform: false,
      secret: false,
      required: false
    },
    {
      id: "token",
      label: "API token",
      options: [],
      multiSelect: false,
      allowFreeform: true,
      secret: true,
      required: false
    }
  ]
})
const answer = (answers: unknown) => Schema.decodeUnknownSync(UserInputAnswer)({ promptId: "p1", answers })

describe("validateAnswer", () => {
  it("accepts a valid answer and resolves the options", () => {
    const result = validateAnswer(
      prompt,
      answer([
        { questionId: "db", selectedOptionIds: ["sqlite"] },
        { questionId: "extras", selectedOptionIds: ["colors", "emoji"] },
        { questionId: "token", text: "s3cret" }
      ])
    )
    expect(result.ok).toBe(true)
    if (result.ok) {
      expect(result.entries.map((e) => e.selected.map((o) => o.label))).toEqual([["SQLite"], ["Colors", "Emoji"], []])
      expect(result.entries[2]?.text).toBe("s3cret")
    }
  })

  const rejects = (answers: unknown, path: ReadonlyArray<string | number>, message: RegExp) => {
    const result = validateAnswer(prompt, answer(answers))
    expect(result.ok).toBe(false)
    if (!result.ok) {
      expect(result.error.path).toEqual(path)
      expect(result.error.message).toMatch(message)
    }
  }

  it("rejects unknown questions and options, double answers and misplaced free text", () => {
    rejects([{ questionId: "nope", selectedOptionIds: ["pg"] }], ["answers", 0, "questionId"], /unknown question/)
    rejects(
      [{ questionId: "db", selectedOptionIds: ["mysql"] }],
      ["answers", 0, "selectedOptionIds", 0],
      /no option 'mysql'/
    )
    rejects(
      [{ questionId: "db", selectedOptionIds: ["pg", "sqlite"] }],
      ["answers", 0, "selectedOptionIds"],
      /single option/
    )
    rejects(
      [
        { questionId: "db", selectedOptionIds: ["pg"] },
        { questionId: "extras", text: "rainbows" }
      ],
      ["answers", 1, "text"],
      /free text/
    )
    rejects(
      [
        { questionId: "db", selectedOptionIds: ["pg"] },
        { questionId: "db", selectedOptionIds: ["pg"] }
      ],
      ["answers", 1, "questionId"],
      /twice/
    )
    rejects([{ questionId: "db" }], ["answers", 0], /neither/)
    rejects([{ questionId: "extras", selectedOptionIds: ["emoji"] }], ["answers"], /required question 'db'/)
  })

  it("rejects an answer addressed to another prompt", () => {
    const result = validateAnswer(prompt, {
      ...answer([{ questionId: "db", selectedOptionIds: ["pg"] }]),
      promptId: "p2" as never
    })
    expect(result.ok).toBe(false)
  })
})

describe("redactAnswerEntries", () => {
  it("keeps only a marker for secret questions", () => {
    const redacted = redactAnswerEntries(prompt, [
      { questionId: "db" as never, selectedOptionIds: ["pg" as never] },
      { questionId: "token" as never, text: "s3cret" }
    ])
    expect(redacted).toEqual([
      { questionId: "db", selectedOptionIds: ["pg"] },
      { questionId: "token", redacted: true }
    ])
    expect(JSON.stringify(redacted)).not.toContain("s3cret")
  })
})

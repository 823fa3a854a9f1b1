// The literals the PostgreSQL append writes its values in (PgLiteral.ts), read back by a real
// PostgreSQL 15: every text arrives as it was, whichever way it is quoted (dollar-quoted, or
// escaped when it holds the tag; array elements by JSON.stringify, or escaped one by one).
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { arrayLiteral, intArray, literal, textArray } from "../../src/persistence/postgres/PgLiteral.ts"
import { startPostgres, type TestPostgres } from "../support/postgres.ts"

let postgres: TestPostgres
let client: pg.Client
beforeAll(async () => {
  postgres = await startPostgres()
  client = new pg.Client({ connectionString: postgres.url })
  await client.connect()
})
afterAll(async () => {
  await client?.end()
  postgres?.stop()
})

const tricky = [
  "",
  "plain",
  "it's",
  'a "quoted" word',
  "back\\slash \\\\ and \\'",
  "$pb$ the tag $pb$",
  "ends with a dollar $",
  "$$ empty tag $$",
  '{"event":"json","text":"line\\nbreak \\"q\\""}',
  "NULL",
  "  spaces  ",
  "a,b}{c",
  "emoji 😀 and ü",
  "tab\tnew\nline\rcr"
]

describe("PostgreSQL literals of the append script", () => {
  it("a text, quoted on its own, is read back as it was", async () => {
    for (const text of tricky) {
      const { rows } = await client.query<{ v: string }>(`select ${literal(text)}::text as v`)
      expect(rows[0]!.v).toBe(text)
    }
  })

  it("texts in one array literal are read back in order, NULL as NULL, whether JSON can quote them or not", async () => {
    // Without a control character or surrogate: the whole array by JSON.stringify.
    const plain = tricky.filter((t) => !/[\u0000-\u001f\uD800-\uDFFF]/.test(t))
    for (const values of [plain, [...plain, null], tricky, [...tricky, null, "x"], []]) {
      const { rows } = await client.query<{ v: string | null }>(
        `select v from unnest(${textArray(values)}) with ordinality as u(v, n) order by n`
      )
      expect(rows.map((r) => r.v)).toEqual(values)
    }
  })

  it("what PostgreSQL text cannot hold is replaced: NUL and lone surrogates become U+FFFD", async () => {
    const values = ["a\u0000b", "lone \uD800 high", "lone \uDC00 low", "pair \uD83D\uDE00"]
    const { rows } = await client.query<{ v: string }>(
      `select v from unnest(${textArray(values)}) with ordinality as u(v, n) order by n`
    )
    expect(rows.map((r) => r.v)).toEqual(["a\uFFFDb", "lone \uFFFD high", "lone \uFFFD low", "pair 😀"])
  })

  it("numbers and booleans in typed arrays", async () => {
    const { rows } = await client.query<{ i: number; b: boolean | null }>(
      `select i, b from unnest(${intArray([3, -1, 7.9])}, ${arrayLiteral([true, false, null], "boolean")}) as u(i, b)`
    )
    expect(rows).toEqual([
      { i: 3, b: true },
      { i: -1, b: false },
      { i: 7, b: null }
    ])
  })
})

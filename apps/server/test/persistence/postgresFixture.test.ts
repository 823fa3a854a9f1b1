import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startPostgres, type TestPostgres } from "../support/postgres.ts"

let postgres: TestPostgres
beforeAll(async () => {
  postgres = await startPostgres()
})
afterAll(() => postgres?.stop())

describe("the test PostgreSQL", () => {
  it("is PostgreSQL 15, on loopback, with databases of its own", async () => {
    const url = await postgres.createDatabase("fixture_check")
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    try {
      const { rows } = await client.query<{ version: string; addr: string }>(
        "select current_setting('server_version') as version, inet_server_addr()::text as addr"
      )
      expect(rows[0]!.version).toMatch(/^15\./)
      expect(rows[0]!.addr).toBe("127.0.0.1/32")
    } finally {
      await client.end()
    }
  })
})

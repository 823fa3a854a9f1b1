import type pg from "pg"

export type Isolation = "read committed" | "repeatable read"

/**
 * Runs `work` in one transaction on a connection of the pool: committed when it resolves,
 * rolled back when it rejects (and the rejection passed on). A connection whose rollback
 * failed is discarded rather than returned to the pool in an unknown state.
 */
export const inTransaction = async <A>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<A>,
  options: { readonly isolation?: Isolation; readonly readOnly?: boolean } = {}
): Promise<A> => {
  const client = await pool.connect()
  let broken: Error | undefined
  try {
    const mode = `${options.isolation === undefined ? "" : ` isolation level ${options.isolation}`}${options.readOnly === true ? " read only" : ""}`
    await client.query(`begin${mode}`)
    try {
      const result = await work(client)
      await client.query("commit")
      return result
    } catch (error) {
      await client.query("rollback").catch((rollbackError: unknown) => {
        broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError))
      })
      throw error
    }
  } finally {
    client.release(broken)
  }
}

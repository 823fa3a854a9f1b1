/**
 * Writes every committed fixture's golden (`<name>.events.jsonl`) again from its committed
 * transcript, which is left as recorded: what a mapping change needs when the native lines are
 * the same (re-recording, `record-*-fixtures.ts`, is for a change in what the programs send).
 * Review the goldens' diff: it is exactly the mapping change.
 *
 *   node apps/server/bin/run-ts.mjs apps/server/scripts/rewrite-fixture-goldens.ts [dir…]
 */
import { fixtureNames, rewriteGolden } from "./fixtureRecording.ts"

const dirs = process.argv.slice(2)
for (const dir of dirs.length > 0 ? dirs : ["codex", "claude", "acp", "cursor"]) {
  for (const name of fixtureNames(dir)) console.log(`${dir}/${name}: ${await rewriteGolden(dir, name)}`)
}

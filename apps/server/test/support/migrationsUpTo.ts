import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"

/**
 * The migrations folder `folder` as it was up to the migration tagged `lastTag` (the journal cut
 * there, the files copied into `into`): what an earlier release migrated its databases with.
 */
export const migrationsUpTo = (folder: string, lastTag: string, into: string): string => {
  mkdirSync(join(into, "meta"), { recursive: true })
  const journal = JSON.parse(readFileSync(join(folder, "meta", "_journal.json"), "utf8")) as {
    entries: Array<{ idx: number; tag: string }>
  }
  const last = journal.entries.find((e) => e.tag === lastTag)!.idx
  const entries = journal.entries.filter((e) => e.idx <= last)
  for (const e of entries) copyFileSync(join(folder, `${e.tag}.sql`), join(into, `${e.tag}.sql`))
  writeFileSync(join(into, "meta", "_journal.json"), JSON.stringify({ ...journal, entries }))
  return into
}

-- Issue 32: fewer pages written per ingested batch. `proposed_plans_thread` (thread, turn) served
-- no query (thread reads range over `proposed_plans_thread_created`), yet every projected plan
-- row was written into it. Tried and not kept: `items`, `turns` and `item_text_chunks` as
-- WITHOUT ROWID tables wrote 162 WAL frames a batch instead of 129 (their wide rows are then
-- scattered by thread instead of appended at the rowid's end; bench/PROFILE.md).
DROP INDEX `proposed_plans_thread`;

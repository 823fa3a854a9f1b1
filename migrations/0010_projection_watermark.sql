-- Issue 32: the projections may lag the log by a bounded number of events (SqliteEventLog.ts);
-- the last event they have applied. Existing databases are projected to their log's end.
CREATE TABLE `projection_watermark` (
	`id` integer PRIMARY KEY NOT NULL,
	`seq` integer NOT NULL
);
--> statement-breakpoint
INSERT INTO `projection_watermark` (`id`, `seq`) SELECT 1, coalesce(max(`seq`), 0) FROM `events`;

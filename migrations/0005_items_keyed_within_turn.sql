-- Issue 34: an item is keyed within its turn, (thread, turn, item), and so is its streamed text.
-- Hand-edited from drizzle-kit's output, which cannot copy the data: a chunk's turn is its item's
-- (the old key (thread, item) names one item, so the join finds exactly one), and a stored
-- generated column (`json`) is left out of the copy, SQLite computing it for every row.
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_item_text_chunks` (
	`thread_id` text NOT NULL,
	`turn_id` text NOT NULL,
	`item_id` text NOT NULL,
	`first_seq` integer NOT NULL,
	`text` text NOT NULL,
	PRIMARY KEY(`thread_id`, `turn_id`, `item_id`, `first_seq`)
);
--> statement-breakpoint
INSERT INTO `__new_item_text_chunks`("thread_id", "turn_id", "item_id", "first_seq", "text") SELECT c."thread_id", i."turn_id", c."item_id", c."first_seq", c."text" FROM `item_text_chunks` c JOIN `items` i ON i."thread_id" = c."thread_id" AND i."item_id" = c."item_id";--> statement-breakpoint
DROP TABLE `item_text_chunks`;--> statement-breakpoint
ALTER TABLE `__new_item_text_chunks` RENAME TO `item_text_chunks`;--> statement-breakpoint
CREATE TABLE `__new_items` (
	`thread_id` text NOT NULL,
	`item_id` text NOT NULL,
	`turn_id` text NOT NULL,
	`item_type` text NOT NULL,
	`status` text NOT NULL,
	`title` text,
	`tool_name` text,
	`text` text NOT NULL,
	`data` text,
	`started_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`completed_at` text,
	`json` text GENERATED ALWAYS AS ('{"itemId":' || json_quote("item_id") || ',"turnId":' || json_quote("turn_id") || ',"itemType":' || json_quote("item_type") || ',"status":' || json_quote("status") || ',"title":' || json_quote("title") || ',"toolName":' || json_quote("tool_name") || ',"startedAt":' || json_quote("started_at") || ',"completedAt":' || json_quote("completed_at") || ',"text":' || json_quote("text") || '}') STORED NOT NULL,
	PRIMARY KEY(`thread_id`, `turn_id`, `item_id`),
	FOREIGN KEY (`thread_id`) REFERENCES `threads`(`thread_id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
INSERT INTO `__new_items`("thread_id", "item_id", "turn_id", "item_type", "status", "title", "tool_name", "text", "data", "started_at", "updated_at", "completed_at") SELECT "thread_id", "item_id", "turn_id", "item_type", "status", "title", "tool_name", "text", "data", "started_at", "updated_at", "completed_at" FROM `items`;--> statement-breakpoint
DROP TABLE `items`;--> statement-breakpoint
ALTER TABLE `__new_items` RENAME TO `items`;--> statement-breakpoint
CREATE INDEX `items_thread_start` ON `items` (`thread_id`,`started_at`,`item_id`);--> statement-breakpoint
PRAGMA foreign_keys=ON;
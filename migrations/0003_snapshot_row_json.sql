-- drizzle-kit 0.31 leaves stored generated columns out of its ALTER TABLE (SQLite cannot add one
-- to a table): each table with a snapshot `json` column (SnapshotRowJson.ts) is rebuilt with it,
-- its rows copied (SQLite computes their `json`), and its indexes made again.
CREATE TABLE `__new_turns` (
	`thread_id` text NOT NULL,
	`turn_id` text NOT NULL,
	`status` text NOT NULL,
	`mode` text,
	`error` text,
	`usage` text,
	`duration_ms` integer,
	`started_at` text NOT NULL,
	`completed_at` text,
	`json` text GENERATED ALWAYS AS ('{"turnId":' || json_quote("turn_id") || ',"status":' || json_quote("status") || ',"mode":' || json_quote("mode") || ',"error":' || coalesce("error", 'null') || ',"usage":' || coalesce("usage", 'null') || ',"startedAt":' || json_quote("started_at") || ',"completedAt":' || json_quote("completed_at") || '}') STORED NOT NULL,
	PRIMARY KEY(`thread_id`, `turn_id`),
	FOREIGN KEY (`thread_id`) REFERENCES `threads`(`thread_id`) ON UPDATE no action ON DELETE no action
);--> statement-breakpoint
INSERT INTO `__new_turns`(`thread_id`, `turn_id`, `status`, `mode`, `error`, `usage`, `duration_ms`, `started_at`, `completed_at`) SELECT `thread_id`, `turn_id`, `status`, `mode`, `error`, `usage`, `duration_ms`, `started_at`, `completed_at` FROM `turns`;--> statement-breakpoint
DROP TABLE `turns`;--> statement-breakpoint
ALTER TABLE `__new_turns` RENAME TO `turns`;--> statement-breakpoint
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
	PRIMARY KEY(`thread_id`, `item_id`),
	FOREIGN KEY (`thread_id`) REFERENCES `threads`(`thread_id`) ON UPDATE no action ON DELETE no action
);--> statement-breakpoint
INSERT INTO `__new_items`(`thread_id`, `item_id`, `turn_id`, `item_type`, `status`, `title`, `tool_name`, `text`, `data`, `started_at`, `updated_at`, `completed_at`) SELECT `thread_id`, `item_id`, `turn_id`, `item_type`, `status`, `title`, `tool_name`, `text`, `data`, `started_at`, `updated_at`, `completed_at` FROM `items`;--> statement-breakpoint
DROP TABLE `items`;--> statement-breakpoint
ALTER TABLE `__new_items` RENAME TO `items`;--> statement-breakpoint
CREATE TABLE `__new_proposed_plans` (
	`plan_id` text PRIMARY KEY NOT NULL,
	`thread_id` text NOT NULL,
	`turn_id` text NOT NULL,
	`status` text NOT NULL,
	`streamed_text` text NOT NULL,
	`markdown` text,
	`file_path` text,
	`title` text,
	`decision` text,
	`feedback` text,
	`edited_markdown` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`json` text GENERATED ALWAYS AS ('{"planId":' || json_quote("plan_id") || ',"turnId":' || json_quote("turn_id") || ',"status":' || json_quote("status") || ',"streamedText":' || json_quote("streamed_text") || ',"markdown":' || json_quote("markdown") || ',"filePath":' || json_quote("file_path") || ',"decision":' || json_quote("decision") || ',"feedback":' || json_quote("feedback") || ',"editedMarkdown":' || json_quote("edited_markdown") || ',"createdAt":' || json_quote("created_at") || '}') STORED NOT NULL,
	FOREIGN KEY (`thread_id`) REFERENCES `threads`(`thread_id`) ON UPDATE no action ON DELETE no action
);--> statement-breakpoint
INSERT INTO `__new_proposed_plans`(`plan_id`, `thread_id`, `turn_id`, `status`, `streamed_text`, `markdown`, `file_path`, `title`, `decision`, `feedback`, `edited_markdown`, `created_at`, `updated_at`) SELECT `plan_id`, `thread_id`, `turn_id`, `status`, `streamed_text`, `markdown`, `file_path`, `title`, `decision`, `feedback`, `edited_markdown`, `created_at`, `updated_at` FROM `proposed_plans`;--> statement-breakpoint
DROP TABLE `proposed_plans`;--> statement-breakpoint
ALTER TABLE `__new_proposed_plans` RENAME TO `proposed_plans`;--> statement-breakpoint
CREATE INDEX `proposed_plans_thread` ON `proposed_plans` (`thread_id`,`turn_id`);--> statement-breakpoint
CREATE TABLE `__new_prompts` (
	`prompt_id` text PRIMARY KEY NOT NULL,
	`thread_id` text NOT NULL,
	`turn_id` text,
	`provider` text NOT NULL,
	`request_id` text,
	`prompt` text NOT NULL,
	`blocking` integer NOT NULL,
	`source` text NOT NULL,
	`status` text NOT NULL,
	`resolution` text,
	`answers` text,
	`reason` text,
	`requested_event_id` text NOT NULL,
	`resolved_event_id` text,
	`created_at` text NOT NULL,
	`resolved_at` text,
	`json` text GENERATED ALWAYS AS ('{"promptId":' || json_quote("prompt_id") || ',"turnId":' || json_quote("turn_id") || ',"requestId":' || json_quote("request_id") || ',"prompt":' || coalesce("prompt", 'null') || ',"status":' || case "status" when 'pending' then '"pending"' else '"resolved"' end || ',"resolution":' || json_quote("resolution") || ',"answers":' || coalesce("answers", 'null') || ',"reason":' || json_quote("reason") || ',"createdAt":' || json_quote("created_at") || ',"resolvedAt":' || json_quote("resolved_at") || '}') STORED NOT NULL,
	FOREIGN KEY (`thread_id`) REFERENCES `threads`(`thread_id`) ON UPDATE no action ON DELETE no action
);--> statement-breakpoint
INSERT INTO `__new_prompts`(`prompt_id`, `thread_id`, `turn_id`, `provider`, `request_id`, `prompt`, `blocking`, `source`, `status`, `resolution`, `answers`, `reason`, `requested_event_id`, `resolved_event_id`, `created_at`, `resolved_at`) SELECT `prompt_id`, `thread_id`, `turn_id`, `provider`, `request_id`, `prompt`, `blocking`, `source`, `status`, `resolution`, `answers`, `reason`, `requested_event_id`, `resolved_event_id`, `created_at`, `resolved_at` FROM `prompts`;--> statement-breakpoint
DROP TABLE `prompts`;--> statement-breakpoint
ALTER TABLE `__new_prompts` RENAME TO `prompts`;--> statement-breakpoint
CREATE INDEX `prompts_status` ON `prompts` (`status`,`created_at`);--> statement-breakpoint
CREATE INDEX `prompts_thread` ON `prompts` (`thread_id`);--> statement-breakpoint
CREATE TABLE `__new_requests` (
	`request_id` text PRIMARY KEY NOT NULL,
	`thread_id` text NOT NULL,
	`turn_id` text,
	`kind` text NOT NULL,
	`title` text,
	`detail` text,
	`options` text NOT NULL,
	`native_method` text NOT NULL,
	`native_id` text NOT NULL,
	`prompt_id` text,
	`plan_id` text,
	`status` text NOT NULL,
	`resolution` text,
	`option_id` text,
	`opened_event_id` text NOT NULL,
	`created_at` text NOT NULL,
	`resolved_at` text,
	`json` text GENERATED ALWAYS AS ('{"requestId":' || json_quote("request_id") || ',"turnId":' || json_quote("turn_id") || ',"kind":' || json_quote("kind") || ',"title":' || json_quote("title") || ',"detail":' || json_quote("detail") || ',"options":' || coalesce("options", '[]') || ',"status":' || case "status" when 'pending' then '"pending"' else '"resolved"' end || ',"resolution":' || json_quote("resolution") || ',"optionId":' || json_quote("option_id") || ',"promptId":' || json_quote("prompt_id") || ',"planId":' || json_quote("plan_id") || ',"createdAt":' || json_quote("created_at") || '}') STORED NOT NULL,
	FOREIGN KEY (`thread_id`) REFERENCES `threads`(`thread_id`) ON UPDATE no action ON DELETE no action
);--> statement-breakpoint
INSERT INTO `__new_requests`(`request_id`, `thread_id`, `turn_id`, `kind`, `title`, `detail`, `options`, `native_method`, `native_id`, `prompt_id`, `plan_id`, `status`, `resolution`, `option_id`, `opened_event_id`, `created_at`, `resolved_at`) SELECT `request_id`, `thread_id`, `turn_id`, `kind`, `title`, `detail`, `options`, `native_method`, `native_id`, `prompt_id`, `plan_id`, `status`, `resolution`, `option_id`, `opened_event_id`, `created_at`, `resolved_at` FROM `requests`;--> statement-breakpoint
DROP TABLE `requests`;--> statement-breakpoint
ALTER TABLE `__new_requests` RENAME TO `requests`;--> statement-breakpoint
CREATE INDEX `requests_status` ON `requests` (`status`);--> statement-breakpoint
CREATE INDEX `requests_thread` ON `requests` (`thread_id`);

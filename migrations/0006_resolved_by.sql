-- Issue 29: prompts, requests and proposed plans keep who or what resolved them (`resolved_by`),
-- and their snapshot `json` lists it. drizzle-kit 0.31 only adds the column: SQLite cannot change
-- a stored generated column, so each table is rebuilt with both, its rows copied (SQLite computes
-- their `json`; `resolved_by` is null for what was resolved before it was recorded), and its
-- indexes made again.
PRAGMA foreign_keys=OFF;--> statement-breakpoint
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
	`resolved_by` text,
	`created_at` text NOT NULL,
	`resolved_at` text,
	`json` text GENERATED ALWAYS AS ('{"promptId":' || json_quote("prompt_id") || ',"turnId":' || json_quote("turn_id") || ',"requestId":' || json_quote("request_id") || ',"prompt":' || coalesce("prompt", 'null') || ',"status":' || case "status" when 'pending' then '"pending"' else '"resolved"' end || ',"resolution":' || json_quote("resolution") || ',"answers":' || coalesce("answers", 'null') || ',"reason":' || json_quote("reason") || ',"createdAt":' || json_quote("created_at") || ',"resolvedAt":' || json_quote("resolved_at") || ',"resolvedBy":' || coalesce("resolved_by", 'null') || '}') STORED NOT NULL,
	FOREIGN KEY (`thread_id`) REFERENCES `threads`(`thread_id`) ON UPDATE no action ON DELETE no action
);--> statement-breakpoint
INSERT INTO `__new_prompts`("prompt_id", "thread_id", "turn_id", "provider", "request_id", "prompt", "blocking", "source", "status", "resolution", "answers", "reason", "requested_event_id", "resolved_event_id", "created_at", "resolved_at") SELECT "prompt_id", "thread_id", "turn_id", "provider", "request_id", "prompt", "blocking", "source", "status", "resolution", "answers", "reason", "requested_event_id", "resolved_event_id", "created_at", "resolved_at" FROM `prompts`;--> statement-breakpoint
DROP TABLE `prompts`;--> statement-breakpoint
ALTER TABLE `__new_prompts` RENAME TO `prompts`;--> statement-breakpoint
CREATE INDEX `prompts_status` ON `prompts` (`status`,`created_at`);--> statement-breakpoint
CREATE INDEX `prompts_thread_pending` ON `prompts` (`thread_id`,`created_at`,`prompt_id`) WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX `prompts_thread` ON `prompts` (`thread_id`,`created_at`,`prompt_id`);--> statement-breakpoint
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
	`resolved_by` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`json` text GENERATED ALWAYS AS ('{"planId":' || json_quote("plan_id") || ',"turnId":' || json_quote("turn_id") || ',"status":' || json_quote("status") || ',"streamedText":' || json_quote("streamed_text") || ',"markdown":' || json_quote("markdown") || ',"filePath":' || json_quote("file_path") || ',"decision":' || json_quote("decision") || ',"feedback":' || json_quote("feedback") || ',"editedMarkdown":' || json_quote("edited_markdown") || ',"createdAt":' || json_quote("created_at") || ',"resolvedBy":' || coalesce("resolved_by", 'null') || '}') STORED NOT NULL,
	FOREIGN KEY (`thread_id`) REFERENCES `threads`(`thread_id`) ON UPDATE no action ON DELETE no action
);--> statement-breakpoint
INSERT INTO `__new_proposed_plans`("plan_id", "thread_id", "turn_id", "status", "streamed_text", "markdown", "file_path", "title", "decision", "feedback", "edited_markdown", "created_at", "updated_at") SELECT "plan_id", "thread_id", "turn_id", "status", "streamed_text", "markdown", "file_path", "title", "decision", "feedback", "edited_markdown", "created_at", "updated_at" FROM `proposed_plans`;--> statement-breakpoint
DROP TABLE `proposed_plans`;--> statement-breakpoint
ALTER TABLE `__new_proposed_plans` RENAME TO `proposed_plans`;--> statement-breakpoint
CREATE INDEX `proposed_plans_thread` ON `proposed_plans` (`thread_id`,`turn_id`);--> statement-breakpoint
CREATE INDEX `proposed_plans_thread_created` ON `proposed_plans` (`thread_id`,`created_at`,`plan_id`);--> statement-breakpoint
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
	`resolved_by` text,
	`opened_event_id` text NOT NULL,
	`created_at` text NOT NULL,
	`resolved_at` text,
	`json` text GENERATED ALWAYS AS ('{"requestId":' || json_quote("request_id") || ',"turnId":' || json_quote("turn_id") || ',"kind":' || json_quote("kind") || ',"title":' || json_quote("title") || ',"detail":' || json_quote("detail") || ',"options":' || coalesce("options", '[]') || ',"status":' || case "status" when 'pending' then '"pending"' else '"resolved"' end || ',"resolution":' || json_quote("resolution") || ',"optionId":' || json_quote("option_id") || ',"promptId":' || json_quote("prompt_id") || ',"planId":' || json_quote("plan_id") || ',"createdAt":' || json_quote("created_at") || ',"resolvedBy":' || coalesce("resolved_by", 'null') || '}') STORED NOT NULL,
	FOREIGN KEY (`thread_id`) REFERENCES `threads`(`thread_id`) ON UPDATE no action ON DELETE no action
);--> statement-breakpoint
INSERT INTO `__new_requests`("request_id", "thread_id", "turn_id", "kind", "title", "detail", "options", "native_method", "native_id", "prompt_id", "plan_id", "status", "resolution", "option_id", "opened_event_id", "created_at", "resolved_at") SELECT "request_id", "thread_id", "turn_id", "kind", "title", "detail", "options", "native_method", "native_id", "prompt_id", "plan_id", "status", "resolution", "option_id", "opened_event_id", "created_at", "resolved_at" FROM `requests`;--> statement-breakpoint
DROP TABLE `requests`;--> statement-breakpoint
ALTER TABLE `__new_requests` RENAME TO `requests`;--> statement-breakpoint
CREATE INDEX `requests_status` ON `requests` (`status`);--> statement-breakpoint
CREATE INDEX `requests_thread_pending` ON `requests` (`thread_id`,`created_at`,`request_id`) WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX `requests_thread` ON `requests` (`thread_id`,`created_at`,`request_id`);--> statement-breakpoint
PRAGMA foreign_keys=ON;

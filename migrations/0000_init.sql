CREATE TABLE `client_requests` (
	`client_request_id` text PRIMARY KEY NOT NULL,
	`outcome` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `events` (
	`seq` integer PRIMARY KEY NOT NULL,
	`event_id` text NOT NULL,
	`thread_id` text NOT NULL,
	`thread_seq` integer NOT NULL,
	`schema_version` integer NOT NULL,
	`event` text NOT NULL,
	`raw` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `events_event_id` ON `events` (`event_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `events_thread_seq` ON `events` (`thread_id`,`thread_seq`);--> statement-breakpoint
CREATE TABLE `items` (
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
	PRIMARY KEY(`thread_id`, `item_id`),
	FOREIGN KEY (`thread_id`) REFERENCES `threads`(`thread_id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `plan_snapshots` (
	`thread_id` text NOT NULL,
	`turn_id` text NOT NULL,
	`revision` integer NOT NULL,
	`explanation` text,
	`steps` text NOT NULL,
	`source` text NOT NULL,
	`is_latest` integer NOT NULL,
	`event_id` text NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`thread_id`, `turn_id`, `revision`),
	FOREIGN KEY (`thread_id`) REFERENCES `threads`(`thread_id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `prompts` (
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
	FOREIGN KEY (`thread_id`) REFERENCES `threads`(`thread_id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `prompts_status` ON `prompts` (`status`,`created_at`);--> statement-breakpoint
CREATE INDEX `prompts_thread` ON `prompts` (`thread_id`);--> statement-breakpoint
CREATE TABLE `proposed_plans` (
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
	FOREIGN KEY (`thread_id`) REFERENCES `threads`(`thread_id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `proposed_plans_thread` ON `proposed_plans` (`thread_id`,`turn_id`);--> statement-breakpoint
CREATE TABLE `requests` (
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
	FOREIGN KEY (`thread_id`) REFERENCES `threads`(`thread_id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `requests_status` ON `requests` (`status`);--> statement-breakpoint
CREATE INDEX `requests_thread` ON `requests` (`thread_id`);--> statement-breakpoint
CREATE TABLE `threads` (
	`thread_id` text PRIMARY KEY NOT NULL,
	`provider` text NOT NULL,
	`state` text NOT NULL,
	`flags` text NOT NULL,
	`mode` text,
	`native_mode` text,
	`model` text,
	`capabilities` text,
	`cwd` text,
	`native_thread_id` text,
	`native_session_id` text,
	`provider_version` text,
	`exit` text,
	`last_seq` integer NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `turns` (
	`thread_id` text NOT NULL,
	`turn_id` text NOT NULL,
	`status` text NOT NULL,
	`mode` text,
	`error` text,
	`usage` text,
	`duration_ms` integer,
	`started_at` text NOT NULL,
	`completed_at` text,
	PRIMARY KEY(`thread_id`, `turn_id`),
	FOREIGN KEY (`thread_id`) REFERENCES `threads`(`thread_id`) ON UPDATE no action ON DELETE no action
);

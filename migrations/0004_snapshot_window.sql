DROP INDEX `prompts_thread`;--> statement-breakpoint
CREATE INDEX `prompts_thread_pending` ON `prompts` (`thread_id`,`created_at`,`prompt_id`) WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX `prompts_thread` ON `prompts` (`thread_id`,`created_at`,`prompt_id`);--> statement-breakpoint
DROP INDEX `requests_thread`;--> statement-breakpoint
CREATE INDEX `requests_thread_pending` ON `requests` (`thread_id`,`created_at`,`request_id`) WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX `requests_thread` ON `requests` (`thread_id`,`created_at`,`request_id`);--> statement-breakpoint
CREATE INDEX `items_thread_start` ON `items` (`thread_id`,`started_at`,`item_id`);--> statement-breakpoint
CREATE INDEX `plan_snapshots_thread` ON `plan_snapshots` (`thread_id`);--> statement-breakpoint
CREATE INDEX `proposed_plans_thread_created` ON `proposed_plans` (`thread_id`,`created_at`,`plan_id`);--> statement-breakpoint
CREATE INDEX `turns_thread_start` ON `turns` (`thread_id`,`started_at`,`turn_id`);
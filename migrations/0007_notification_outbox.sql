-- Issue 29: the notification outbox (derived from the log), its sinks, attempts and cursor.
CREATE TABLE `notification_attempts` (
	`notification_id` text NOT NULL,
	`attempt` integer NOT NULL,
	`at` text NOT NULL,
	`replica` text NOT NULL,
	`status_code` integer,
	`error` text,
	PRIMARY KEY(`notification_id`, `attempt`)
);
--> statement-breakpoint
CREATE TABLE `notification_cursor` (
	`id` integer PRIMARY KEY NOT NULL,
	`after_seq` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `notification_outbox` (
	`notification_id` text PRIMARY KEY NOT NULL,
	`sink_id` text NOT NULL,
	`thread_id` text NOT NULL,
	`prompt_id` text NOT NULL,
	`event` text NOT NULL,
	`payload` text NOT NULL,
	`status` text NOT NULL,
	`attempts` integer NOT NULL,
	`next_attempt_at` integer NOT NULL,
	`claimed_by` text,
	`claimed_until` integer,
	`last_status` integer,
	`last_error` text,
	`seq` integer NOT NULL,
	`created_at` text NOT NULL,
	`sent_at` text
);
--> statement-breakpoint
CREATE INDEX `notification_outbox_due` ON `notification_outbox` (`status`,`next_attempt_at`);--> statement-breakpoint
CREATE TABLE `notification_sinks` (
	`sink_id` text PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`endpoint` text NOT NULL,
	`p256dh` text,
	`auth` text,
	`client_id` text,
	`created_at` text NOT NULL
);

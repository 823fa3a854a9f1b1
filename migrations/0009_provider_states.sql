-- Issue 32: a thread's provider state, sealed with the token, for resuming it on another replica.
CREATE TABLE `provider_states` (
	`thread_id` text PRIMARY KEY NOT NULL,
	`provider` text NOT NULL,
	`sealed` text NOT NULL,
	`bytes` integer NOT NULL,
	`fence` integer NOT NULL,
	`captured_at` text NOT NULL
);

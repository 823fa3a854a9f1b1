CREATE TABLE `item_text_chunks` (
	`thread_id` text NOT NULL,
	`item_id` text NOT NULL,
	`first_seq` integer NOT NULL,
	`text` text NOT NULL,
	PRIMARY KEY(`thread_id`, `item_id`, `first_seq`)
);

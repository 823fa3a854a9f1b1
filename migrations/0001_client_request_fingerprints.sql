ALTER TABLE `client_requests` ADD `command` text;--> statement-breakpoint
ALTER TABLE `client_requests` ADD `target` text;--> statement-breakpoint
ALTER TABLE `client_requests` ADD `fingerprint` text;
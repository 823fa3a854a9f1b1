CREATE TABLE "relayed_commands" (
	"command_id" text PRIMARY KEY NOT NULL,
	"thread_id" text NOT NULL,
	"owner" text NOT NULL,
	"requester" text NOT NULL,
	"state" text NOT NULL,
	"sealed" text NOT NULL,
	"result" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "session_leases" (
	"thread_id" text PRIMARY KEY NOT NULL,
	"owner" text NOT NULL,
	"fence" bigint NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "relayed_commands_owner" ON "relayed_commands" USING btree ("owner","state");
CREATE TABLE "client_requests" (
	"client_request_id" text PRIMARY KEY NOT NULL,
	"outcome" text NOT NULL,
	"created_at" text NOT NULL,
	"command" text,
	"target" text,
	"fingerprint" text
);
--> statement-breakpoint
CREATE TABLE "events" (
	"seq" bigserial PRIMARY KEY NOT NULL,
	"event_id" text NOT NULL,
	"thread_id" text NOT NULL,
	"thread_seq" integer NOT NULL,
	"schema_version" integer NOT NULL,
	"event" text NOT NULL,
	"raw" text
);
--> statement-breakpoint
CREATE TABLE "item_text_chunks" (
	"thread_id" text NOT NULL,
	"item_id" text NOT NULL,
	"first_seq" integer NOT NULL,
	"text" text NOT NULL,
	CONSTRAINT "item_text_chunks_thread_id_item_id_first_seq_pk" PRIMARY KEY("thread_id","item_id","first_seq")
);
--> statement-breakpoint
CREATE TABLE "items" (
	"thread_id" text NOT NULL,
	"item_id" text NOT NULL,
	"turn_id" text NOT NULL,
	"item_type" text NOT NULL,
	"status" text NOT NULL,
	"title" text,
	"tool_name" text,
	"text" text NOT NULL,
	"data" text,
	"started_at" text NOT NULL,
	"updated_at" text NOT NULL,
	"completed_at" text,
	CONSTRAINT "items_thread_id_item_id_pk" PRIMARY KEY("thread_id","item_id")
);
--> statement-breakpoint
CREATE TABLE "plan_snapshots" (
	"thread_id" text NOT NULL,
	"turn_id" text NOT NULL,
	"revision" integer NOT NULL,
	"explanation" text,
	"steps" text NOT NULL,
	"source" text NOT NULL,
	"is_latest" boolean NOT NULL,
	"event_id" text NOT NULL,
	"created_at" text NOT NULL,
	CONSTRAINT "plan_snapshots_thread_id_turn_id_revision_pk" PRIMARY KEY("thread_id","turn_id","revision")
);
--> statement-breakpoint
CREATE TABLE "prompts" (
	"prompt_id" text PRIMARY KEY NOT NULL,
	"thread_id" text NOT NULL,
	"turn_id" text,
	"provider" text NOT NULL,
	"request_id" text,
	"prompt" text NOT NULL,
	"blocking" boolean NOT NULL,
	"source" text NOT NULL,
	"status" text NOT NULL,
	"resolution" text,
	"answers" text,
	"reason" text,
	"requested_event_id" text NOT NULL,
	"resolved_event_id" text,
	"created_at" text NOT NULL,
	"resolved_at" text
);
--> statement-breakpoint
CREATE TABLE "proposed_plans" (
	"plan_id" text PRIMARY KEY NOT NULL,
	"thread_id" text NOT NULL,
	"turn_id" text NOT NULL,
	"status" text NOT NULL,
	"streamed_text" text NOT NULL,
	"markdown" text,
	"file_path" text,
	"title" text,
	"decision" text,
	"feedback" text,
	"edited_markdown" text,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "requests" (
	"request_id" text PRIMARY KEY NOT NULL,
	"thread_id" text NOT NULL,
	"turn_id" text,
	"kind" text NOT NULL,
	"title" text,
	"detail" text,
	"options" text NOT NULL,
	"native_method" text NOT NULL,
	"native_id" text NOT NULL,
	"prompt_id" text,
	"plan_id" text,
	"status" text NOT NULL,
	"resolution" text,
	"option_id" text,
	"opened_event_id" text NOT NULL,
	"created_at" text NOT NULL,
	"resolved_at" text
);
--> statement-breakpoint
CREATE TABLE "threads" (
	"thread_id" text PRIMARY KEY NOT NULL,
	"provider" text NOT NULL,
	"state" text NOT NULL,
	"flags" text NOT NULL,
	"mode" text,
	"native_mode" text,
	"model" text,
	"capabilities" text,
	"cwd" text,
	"native_thread_id" text,
	"native_session_id" text,
	"provider_version" text,
	"exit" text,
	"last_seq" integer NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "turns" (
	"thread_id" text NOT NULL,
	"turn_id" text NOT NULL,
	"status" text NOT NULL,
	"mode" text,
	"error" text,
	"usage" text,
	"duration_ms" integer,
	"started_at" text NOT NULL,
	"completed_at" text,
	CONSTRAINT "turns_thread_id_turn_id_pk" PRIMARY KEY("thread_id","turn_id")
);
--> statement-breakpoint
ALTER TABLE "items" ADD CONSTRAINT "items_thread_id_threads_thread_id_fk" FOREIGN KEY ("thread_id") REFERENCES "public"."threads"("thread_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "plan_snapshots" ADD CONSTRAINT "plan_snapshots_thread_id_threads_thread_id_fk" FOREIGN KEY ("thread_id") REFERENCES "public"."threads"("thread_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "prompts" ADD CONSTRAINT "prompts_thread_id_threads_thread_id_fk" FOREIGN KEY ("thread_id") REFERENCES "public"."threads"("thread_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "proposed_plans" ADD CONSTRAINT "proposed_plans_thread_id_threads_thread_id_fk" FOREIGN KEY ("thread_id") REFERENCES "public"."threads"("thread_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "requests" ADD CONSTRAINT "requests_thread_id_threads_thread_id_fk" FOREIGN KEY ("thread_id") REFERENCES "public"."threads"("thread_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "turns" ADD CONSTRAINT "turns_thread_id_threads_thread_id_fk" FOREIGN KEY ("thread_id") REFERENCES "public"."threads"("thread_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "events_event_id" ON "events" USING btree ("event_id");--> statement-breakpoint
CREATE UNIQUE INDEX "events_thread_seq" ON "events" USING btree ("thread_id","thread_seq");--> statement-breakpoint
CREATE INDEX "prompts_status" ON "prompts" USING btree ("status","created_at");--> statement-breakpoint
CREATE INDEX "prompts_thread" ON "prompts" USING btree ("thread_id");--> statement-breakpoint
CREATE INDEX "proposed_plans_thread" ON "proposed_plans" USING btree ("thread_id","turn_id");--> statement-breakpoint
CREATE INDEX "requests_status" ON "requests" USING btree ("status");--> statement-breakpoint
CREATE INDEX "requests_thread" ON "requests" USING btree ("thread_id");
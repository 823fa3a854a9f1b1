DROP INDEX "prompts_thread";--> statement-breakpoint
DROP INDEX "requests_thread";--> statement-breakpoint
CREATE INDEX "items_thread_start" ON "items" USING btree ("thread_id","started_at","item_id");--> statement-breakpoint
CREATE INDEX "prompts_thread_pending" ON "prompts" USING btree ("thread_id","created_at","prompt_id") WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX "proposed_plans_thread_created" ON "proposed_plans" USING btree ("thread_id","created_at","plan_id");--> statement-breakpoint
CREATE INDEX "requests_thread_pending" ON "requests" USING btree ("thread_id","created_at","request_id") WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX "turns_thread_start" ON "turns" USING btree ("thread_id","started_at","turn_id");--> statement-breakpoint
CREATE INDEX "prompts_thread" ON "prompts" USING btree ("thread_id","created_at","prompt_id");--> statement-breakpoint
CREATE INDEX "requests_thread" ON "requests" USING btree ("thread_id","created_at","request_id");
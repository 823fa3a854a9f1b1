-- Issue 34: an item is keyed within its turn, (thread, turn, item), and so is its streamed text.
-- Hand-edited from drizzle-kit's output, which adds the chunks' NOT NULL `turn_id` without a
-- value for the rows already there: a chunk's turn is its item's (the old key (thread, item)
-- names one item). Chunks are written only with their item, so none is left without a turn.
ALTER TABLE "item_text_chunks" ADD COLUMN "turn_id" text;--> statement-breakpoint
UPDATE "item_text_chunks" c SET "turn_id" = i."turn_id" FROM "items" i WHERE i."thread_id" = c."thread_id" AND i."item_id" = c."item_id";--> statement-breakpoint
DELETE FROM "item_text_chunks" WHERE "turn_id" IS NULL;--> statement-breakpoint
ALTER TABLE "item_text_chunks" ALTER COLUMN "turn_id" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "item_text_chunks" DROP CONSTRAINT "item_text_chunks_thread_id_item_id_first_seq_pk";--> statement-breakpoint
ALTER TABLE "items" DROP CONSTRAINT "items_thread_id_item_id_pk";--> statement-breakpoint
ALTER TABLE "item_text_chunks" ADD CONSTRAINT "item_text_chunks_thread_id_turn_id_item_id_first_seq_pk" PRIMARY KEY("thread_id","turn_id","item_id","first_seq");--> statement-breakpoint
ALTER TABLE "items" ADD CONSTRAINT "items_thread_id_turn_id_item_id_pk" PRIMARY KEY("thread_id","turn_id","item_id");

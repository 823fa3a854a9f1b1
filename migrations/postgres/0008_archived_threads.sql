-- Issue 27: threads a person archived (thread.archive); not a projection, a rebuild keeps it.
CREATE TABLE "archived_threads" (
	"thread_id" text PRIMARY KEY NOT NULL,
	"archived_at" text NOT NULL
);

import { defineConfig } from "drizzle-kit"

// The PostgreSQL store's migrations, generated from its own schema into their own folder
// (`npm run db:generate:postgres`); the SQLite ones (drizzle.config.ts) are untouched by it.
export default defineConfig({
  dialect: "postgresql",
  schema: "./apps/server/src/persistence/postgres/schema.ts",
  out: "./migrations/postgres"
})

import { defineConfig } from "drizzle-kit"

export default defineConfig({
  dialect: "sqlite",
  schema: "./apps/server/src/persistence/schema.ts",
  out: "./migrations"
})

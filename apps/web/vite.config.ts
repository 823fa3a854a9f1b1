import { defineConfig } from "vite"

// No React plugin: Vite's own transform compiles TSX with the automatic JSX runtime, and Fast
// Refresh (the plugin's other job) is not worth a dependency for a reference client.
export default defineConfig({
  base: "./",
  // The workspace packages from their sources (tsconfig.json's `paths`), not their build.
  resolve: { tsconfigPaths: true },
  oxc: { jsx: { runtime: "automatic" } },
  build: { outDir: "dist", emptyOutDir: true, sourcemap: false, chunkSizeWarningLimit: 1024 }
})

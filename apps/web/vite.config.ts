import { fileURLToPath } from "node:url"
import { defineConfig } from "vite"

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url))

// No React plugin: Vite's own transform compiles TSX with the automatic JSX runtime, and Fast
// Refresh (the plugin's other job) is not worth a dependency for a reference client.
export default defineConfig({
  base: "./",
  // The workspace packages from their sources (tsconfig.json's `paths`), not their build.
  resolve: { tsconfigPaths: true },
  oxc: { jsx: { runtime: "automatic" } },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    sourcemap: false,
    chunkSizeWarningLimit: 1024,
    rollupOptions: {
      // The service worker is a second entry, at a fixed name at the root (its scope is the whole
      // site); it imports only types, so it shares no chunk with the page and loads as a classic script.
      input: { index: here("./index.html"), sw: here("./sw/serviceWorker.ts") },
      output: { entryFileNames: (chunk) => (chunk.name === "sw" ? "sw.js" : "assets/[name]-[hash].js") }
    }
  }
})

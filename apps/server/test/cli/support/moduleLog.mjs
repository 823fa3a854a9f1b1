// Preloaded with `node --import` ahead of the CLI: writes every module the process loads to the
// file named by PLANBRIDGE_MODULE_LOG, one URL or path a line. ES modules are seen by a resolve
// hook (it runs behind tsx's, which hands every resolution on); CommonJS modules, which Node 20
// loads without ESM hooks once inside a CommonJS package, are read from the require cache at exit.
import { appendFileSync } from "node:fs"
import { createRequire, register } from "node:module"

const file = process.env.PLANBRIDGE_MODULE_LOG
if (file === undefined || file === "") throw new Error("moduleLog.mjs needs PLANBRIDGE_MODULE_LOG")
register("./moduleLogHooks.mjs", import.meta.url, { data: { file } })
const requireCache = createRequire(import.meta.url).cache
process.on("exit", () =>
  appendFileSync(
    file,
    Object.keys(requireCache)
      .map((path) => `${path}\n`)
      .join("")
  )
)

// The hooks of moduleLog.mjs: each resolved module URL, appended synchronously so that nothing
// is lost when the process exits right after its last import.
import { appendFileSync } from "node:fs"

let file = ""

export const initialize = (data) => {
  file = data.file
}

export const resolve = async (specifier, context, nextResolve) => {
  const resolved = await nextResolve(specifier, context)
  appendFileSync(file, `${resolved.url}\n`)
  return resolved
}

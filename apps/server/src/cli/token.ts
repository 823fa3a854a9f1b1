import { resolve } from "node:path"
import { loadOrCreateToken } from "../http/Security.ts"
import { parseCommandArgs, registerCommand } from "./main.ts"

registerCommand(
  "token",
  async (args) => {
    const { values } = parseCommandArgs(args, {})
    process.stdout.write(`${loadOrCreateToken(resolve(values["data-dir"]))}\n`)
    return 0
  },
  "print the access token (created on first use, stored 0600 in the data dir)"
)

// Preloaded (`--import`) into every Node 24 process of scripts/node24.sh: loads better-sqlite3's
// addon built for Node 24 (PLANBRIDGE_BETTER_SQLITE3_ADDON) in place of the one in node_modules,
// which is built for the default Node. Nothing in node_modules is written: its files may be hard
// links shared with other checkouts, and a run on the default Node may be using them meanwhile.
import Module from "node:module"
import { basename } from "node:path"

const addon = process.env.PLANBRIDGE_BETTER_SQLITE3_ADDON
const loadNative = Module._extensions[".node"]
if (addon !== undefined && addon !== "") {
  Module._extensions[".node"] = function (module, filename) {
    return loadNative.call(this, module, basename(filename) === "better_sqlite3.node" ? addon : filename)
  }
}

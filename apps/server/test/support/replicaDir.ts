import { chmodSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

/**
 * A replica's own data dir (0700) holding the deployment's shared token (0600), as every replica
 * of one deployment has: the caller removes it.
 */
export const makeReplicaDir = (token: string, prefix = "planbridge-replica-"): string => {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  chmodSync(dir, 0o700)
  writeFileSync(join(dir, "token"), `${token}\n`, { mode: 0o600 })
  return dir
}

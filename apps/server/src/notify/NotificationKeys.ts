import { Schema } from "effect"
import { randomBytes } from "node:crypto"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { ensurePrivateDir, ensurePrivateFile, warnOnStderr, type Warn } from "../persistence/PrivateFiles.ts"

/**
 * The notification secrets, made on the first start and kept 0600 in the data dir, never in the
 * database, a log, a frame or a payload: the VAPID key pair Web Push messages are signed with
 * (`vapid.json`; its public key is what a browser subscribes with), the webhook's HMAC secret
 * (`webhook-secret`, which the receiving relay is given to check signatures) and the key that
 * signs the answer capabilities of push actions (`push-answer-key`, AnswerCapability.ts; it
 * never leaves the server). Replicas on one database must share these files, as they share the token.
 */
export interface NotificationKeys {
  readonly vapid: { readonly publicKey: string; readonly privateKey: string; readonly subject: string }
  readonly webhookSecret: string
  readonly answerKey: string
}

const VapidFile = Schema.Struct({ publicKey: Schema.String, privateKey: Schema.String })
const decodeVapid = Schema.decodeUnknownSync(Schema.fromJsonString(VapidFile))

/** Who the push services may contact about our messages (RFC 8292 `sub`). */
export const VAPID_SUBJECT = "mailto:planbridge@localhost"

const loadOrCreate = <A>(file: string, warn: Warn, read: (text: string) => A, make: () => string): A => {
  if (existsSync(file)) {
    ensurePrivateFile(file, warn)
    return read(readFileSync(file, "utf8"))
  }
  // A new file gets 0600 (the umask only removes bits).
  writeFileSync(file, make(), { mode: 0o600 })
  return read(readFileSync(file, "utf8"))
}

/** The keys of the data dir; `web-push` (~30 ms to load) is loaded only to make the VAPID pair on a first start. */
export const loadOrCreateNotificationKeys = async (
  dataDir: string,
  warn: Warn = warnOnStderr
): Promise<NotificationKeys> => {
  ensurePrivateDir(dataDir, warn)
  const vapidFile = join(dataDir, "vapid.json")
  const made = existsSync(vapidFile) ? undefined : (await import("web-push")).default.generateVAPIDKeys()
  const vapid = loadOrCreate(vapidFile, warn, decodeVapid, () => JSON.stringify(made))
  const secret = (name: string) =>
    loadOrCreate(
      join(dataDir, name),
      warn,
      (text) => text.trim(),
      () => `${randomBytes(32).toString("base64url")}\n`
    )
  return {
    vapid: { ...vapid, subject: VAPID_SUBJECT },
    webhookSecret: secret("webhook-secret"),
    answerKey: secret("push-answer-key")
  }
}

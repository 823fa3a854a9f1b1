import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto"

/**
 * Encryption of relayed commands and their replies (AES-256-GCM), with a key derived from the
 * deployment's token, which every replica shares: the database, its WAL and its backups hold
 * answers (which may be secret) only sealed. A row sealed under another token does not open.
 */
export const makeCommandSeal = (token: string) => {
  const key = Buffer.from(hkdfSync("sha256", token, "planbridge", "relayed-commands-v1", 32))
  return {
    seal: (text: string): string => {
      const iv = randomBytes(12)
      const cipher = createCipheriv("aes-256-gcm", key, iv)
      const body = Buffer.concat([cipher.update(text, "utf8"), cipher.final()])
      return Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64")
    },
    /** Throws when the text was not sealed with this token (or was altered). */
    open: (sealed: string): string => {
      const bytes = Buffer.from(sealed, "base64")
      const decipher = createDecipheriv("aes-256-gcm", key, bytes.subarray(0, 12))
      decipher.setAuthTag(bytes.subarray(12, 28))
      return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString("utf8")
    }
  }
}

import { createECDH, createPublicKey, hkdfSync, randomBytes, verify, createDecipheriv, createHmac } from "node:crypto"
import { createServer, type IncomingMessage, type Server } from "node:http"
import type { AddressInfo } from "node:net"

/**
 * A push service on loopback that checks what a real one checks (RFC 8030, 8291, 8292): each
 * message's VAPID JWT (ES256, signed by the key in `k=`, for this origin, not expired), and
 * decrypts its aes128gcm body with the subscription's own private key and auth secret, as the
 * browser would. It answers with `status(n)` (the n-th message to it, from 1), and keeps what it
 * received. Also a webhook receiver that checks the HMAC signature.
 */
export interface PushReceived {
  readonly vapidKey: string
  readonly topic: string | undefined
  readonly urgency: string | undefined
  readonly ttl: string | undefined
  readonly message: unknown
  readonly answered: number
}

export interface PushService {
  readonly subscription: {
    readonly endpoint: string
    readonly keys: { readonly p256dh: string; readonly auth: string }
  }
  readonly received: Array<PushReceived>
  /** Messages refused as a push service refuses a bad one (401 VAPID, 400 encryption), with why. */
  readonly refused: Array<string>
  status: (n: number) => number
  readonly close: () => Promise<void>
}

const b64 = (text: string) => Buffer.from(text, "base64url")

const readBody = async (req: IncomingMessage) => {
  const chunks: Array<Buffer> = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

/** The VAPID JWT checked against its key and audience; the reason it is refused, or undefined. */
const vapidProblem = (authorization: string | undefined, audience: string): string | undefined => {
  const match = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/u.exec(authorization ?? "")
  if (match === null) return `no VAPID authorization: ${authorization}`
  const [header, payload, signature] = match[1]!.split(".")
  const raw = b64(match[2]!)
  if (raw.length !== 65 || raw[0] !== 4) return "k is not an uncompressed P-256 point"
  const key = createPublicKey({
    key: {
      kty: "EC",
      crv: "P-256",
      x: raw.subarray(1, 33).toString("base64url"),
      y: raw.subarray(33).toString("base64url")
    },
    format: "jwk"
  })
  const signed = Buffer.from(`${header}.${payload}`)
  if (!verify("sha256", signed, { key, dsaEncoding: "ieee-p1363" }, b64(signature ?? "")))
    return "the VAPID signature does not verify"
  const claims = JSON.parse(b64(payload ?? "").toString("utf8")) as { aud?: string; exp?: number; sub?: string }
  if (JSON.parse(b64(header ?? "").toString("utf8")).alg !== "ES256") return "not ES256"
  if (claims.aud !== audience) return `aud ${claims.aud} is not ${audience}`
  const now = Date.now() / 1000
  if (claims.exp === undefined || claims.exp < now || claims.exp > now + 24 * 3600) return `bad exp ${claims.exp}`
  if (claims.sub === undefined || !/^(mailto:|https:)/u.test(claims.sub)) return `bad sub ${claims.sub}`
  return undefined
}

/** RFC 8291 over RFC 8188: the single record's plaintext, as the browser decrypts it. */
const decrypt = (body: Buffer, ua: ReturnType<typeof createECDH>, authSecret: Buffer): Buffer => {
  const salt = body.subarray(0, 16)
  const idlen = body[20]!
  const senderKey = body.subarray(21, 21 + idlen)
  const ciphertext = body.subarray(21 + idlen)
  const shared = ua.computeSecret(senderKey)
  const keyInfo = Buffer.concat([Buffer.from("WebPush: info\0"), ua.getPublicKey(), senderKey])
  const ikm = Buffer.from(hkdfSync("sha256", shared, authSecret, keyInfo, 32))
  const cek = Buffer.from(hkdfSync("sha256", ikm, salt, Buffer.from("Content-Encoding: aes128gcm\0"), 16))
  const nonce = Buffer.from(hkdfSync("sha256", ikm, salt, Buffer.from("Content-Encoding: nonce\0"), 12))
  const decipher = createDecipheriv("aes-128-gcm", cek, nonce)
  decipher.setAuthTag(ciphertext.subarray(ciphertext.length - 16))
  const padded = Buffer.concat([decipher.update(ciphertext.subarray(0, ciphertext.length - 16)), decipher.final()])
  let end = padded.length - 1
  while (end >= 0 && padded[end] === 0) end--
  if (padded[end] !== 2) throw new Error("no last-record delimiter")
  return padded.subarray(0, end)
}

export const startPushService = async (): Promise<PushService> => {
  const ua = createECDH("prime256v1")
  ua.generateKeys()
  const authSecret = randomBytes(16)
  const received: Array<PushReceived> = []
  const refused: Array<string> = []
  let count = 0
  const service: { status: (n: number) => number } = { status: () => 201 }
  let origin = ""
  const server: Server = createServer((req, res) => {
    void readBody(req).then((body) => {
      const problem = vapidProblem(req.headers.authorization, origin)
      if (problem !== undefined) {
        refused.push(problem)
        return res.writeHead(401).end()
      }
      if (req.headers["content-encoding"] !== "aes128gcm") {
        refused.push(`content-encoding ${req.headers["content-encoding"]}`)
        return res.writeHead(400).end()
      }
      let message: unknown
      try {
        message = JSON.parse(decrypt(body, ua, authSecret).toString("utf8"))
      } catch (error) {
        refused.push(`cannot decrypt: ${String(error)}`)
        return res.writeHead(400).end()
      }
      const answered = service.status(++count)
      const header = (name: string) => {
        const value = req.headers[name]
        return Array.isArray(value) ? value[0] : value
      }
      received.push({
        vapidKey: /k=([A-Za-z0-9_-]+)/u.exec(req.headers.authorization ?? "")![1]!,
        topic: header("topic"),
        urgency: header("urgency"),
        ttl: header("ttl"),
        message,
        answered
      })
      res.writeHead(answered).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return Object.assign(service, {
    subscription: {
      endpoint: `${origin}/push/${randomBytes(8).toString("hex")}`,
      keys: { p256dh: ua.getPublicKey().toString("base64url"), auth: authSecret.toString("base64url") }
    },
    received,
    refused,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  })
}

export interface WebhookReceived {
  readonly body: unknown
  readonly delivery: string | undefined
  readonly answered: number
}

/**
 * A webhook relay on loopback: checks `planbridge-signature` with `secret()`, answers `status(n)`
 * for the n-th attempt of each delivery.
 */
export const startWebhookReceiver = async (secret: () => string) => {
  const received: Array<WebhookReceived> = []
  const refused: Array<string> = []
  /** Attempts seen per delivery id (`planbridge-delivery`). */
  const perDelivery = new Map<string, number>()
  const receiver = { status: (_nth: number): number | "hang" => 200 }
  const server = createServer((req, res) => {
    void readBody(req).then((body) => {
      const match = /^t=(\d+),v1=([0-9a-f]{64})$/u.exec(String(req.headers["planbridge-signature"] ?? ""))
      const expected = match === null ? "" : createHmac("sha256", secret()).update(`${match[1]}.${body}`).digest("hex")
      if (match === null || expected !== match[2]) {
        refused.push("bad signature")
        return res.writeHead(401).end()
      }
      const delivery = String(req.headers["planbridge-delivery"] ?? "")
      const nth = (perDelivery.get(delivery) ?? 0) + 1
      perDelivery.set(delivery, nth)
      const answered = receiver.status(nth)
      if (answered === "hang") return // never answered: the sender's timeout must end it
      received.push({
        body: JSON.parse(body.toString("utf8")),
        delivery: req.headers["planbridge-delivery"] as string,
        answered
      })
      res.writeHead(answered).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`
  return Object.assign(receiver, {
    url,
    received,
    refused,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  })
}

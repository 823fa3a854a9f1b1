import { ServerFrame } from "@planbridge/contracts"
import { Exit, Schema } from "effect"

const decodeFrame = Schema.decodeUnknownExit(ServerFrame)

/** A text frame from the server as a `ServerFrame`, or why it is not one (not JSON, or not a known frame). */
export const decodeServerFrame = (text: string): { readonly frame: ServerFrame } | { readonly error: string } => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    return { error: String(error) }
  }
  const decoded = decodeFrame(json)
  if (Exit.isFailure(decoded)) return { error: String(decoded.cause) }
  return { frame: decoded.value }
}

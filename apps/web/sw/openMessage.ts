/**
 * What the service worker posts to an open Planbridge window when its notification is opened:
 * show this thread at this prompt (the same as the deep link `/?thread=ID&prompt=ID`).
 */
export interface OpenMessage {
  readonly type: "planbridge.open"
  readonly threadId: string
  readonly promptId: string
}

export const isOpenMessage = (value: unknown): value is OpenMessage =>
  typeof value === "object" &&
  value !== null &&
  "type" in value &&
  value.type === "planbridge.open" &&
  "threadId" in value &&
  typeof value.threadId === "string" &&
  "promptId" in value &&
  typeof value.promptId === "string"

export { backoffDelay, DEFAULT_BACKOFF, type BackoffOptions } from "./backoff.ts"
export { Inbox, type InboxEntry } from "./Inbox.ts"
export {
  PlanbridgeClient,
  type ClientOptions,
  type ConnectionStatus,
  type ThreadResumeResult,
  type WebSocketConstructor,
  type WebSocketLike
} from "./PlanbridgeClient.ts"
export { PlanbridgeError, type ClientErrorCode } from "./PlanbridgeError.ts"
export { ThreadStore } from "./ThreadStore.ts"

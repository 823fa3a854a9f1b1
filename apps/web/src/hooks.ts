import type { ConnectionStatus, PlanbridgeClient } from "@planbridge/client"
import { useCallback, useSyncExternalStore } from "react"

/** Anything with the `useSyncExternalStore` contract: ThreadStore, Inbox, ExternalStore. */
export interface Readable<T> {
  readonly subscribe: (listener: () => void) => () => void
  readonly getSnapshot: () => T
}

export const useStore = <T>(store: Readable<T>): T => useSyncExternalStore(store.subscribe, store.getSnapshot)

export const useConnectionStatus = (client: PlanbridgeClient): ConnectionStatus => {
  const subscribe = useCallback((listener: () => void) => client.onStatus(listener), [client])
  return useSyncExternalStore(subscribe, () => client.status)
}

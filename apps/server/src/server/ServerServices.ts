import { Layer, type ManagedRuntime } from "effect"
import { ProviderRegistry, type RegisteredProvider } from "../orchestration/ProviderRegistry.ts"
import { RuntimeIngestion } from "../orchestration/RuntimeIngestion.ts"
import { SessionHomes } from "../orchestration/SessionHomes.ts"
import { SessionManager } from "../orchestration/SessionManager.ts"
import { ServerWaitPolicy, WAIT } from "../orchestration/WaitPolicies.ts"
import { Notifications } from "../notify/Notifications.ts"
import type { WaitPolicy } from "@planbridge/contracts"
import type { StoreError } from "../persistence/StoreError.ts"
import type { StoreServices } from "../persistence/StoreServices.ts"
import type { AdapterError } from "../provider/AdapterError.ts"
import { processGroupsLayer } from "../provider/ProcessGroups.ts"

/** The services the WebSocket and HTTP edges are served by. */
export type ServerServices =
  StoreServices | RuntimeIngestion | SessionManager | ProviderRegistry | SessionHomes | Notifications

/** One ManagedRuntime over `serverLayer`, shared by both edges. */
export type ServerRuntime = ManagedRuntime.ManagedRuntime<ServerServices, unknown>

export interface ServerLayerOptions {
  /** The persistence engine (SQLite: `sqliteStore`); nothing above it knows which one it is. */
  readonly store: Layer.Layer<StoreServices, StoreError>
  readonly dataDir: string
  readonly providers: ReadonlyArray<RegisteredProvider>
  /** The server's wait policy (`serve --wait-policy`); absent: `wait`. */
  readonly waitPolicy?: WaitPolicy
}

/**
 * The server's services, in the order they must be released: sessions first (their provider
 * processes end), then ingestion and the store, and the process-group records last, because
 * they are built first.
 */
export const serverLayer = (options: ServerLayerOptions): Layer.Layer<ServerServices, StoreError | AdapterError> =>
  SessionManager.layer.pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        RuntimeIngestion.layer,
        ProviderRegistry.layer(options.providers),
        SessionHomes.layer(options.dataDir),
        ServerWaitPolicy.layer(options.waitPolicy ?? WAIT),
        Notifications.layer(options.dataDir)
      )
    ),
    Layer.provideMerge(options.store),
    // Built first, released last: sessions end their provider groups before the records close.
    Layer.provideMerge(processGroupsLayer(options.dataDir))
  )

/** Node's own full collection, when node runs with `--expose-gc` (`npm run bench` does). */
export const exposedGc = (): (() => void) | undefined => (globalThis as { gc?: () => void }).gc

/**
 * Collects the heap before a side is measured, when it can: each side then starts without the
 * other's garbage, that of making its inputs or that of the parts run before it, which otherwise
 * lands as a major collection (~125 ms seen in the ingest part) in whichever side runs when the
 * old generation fills.
 */
export const collectGarbage = (): void => exposedGc()?.()

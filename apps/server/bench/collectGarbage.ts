/**
 * Collects the heap when the bench runs with `--expose-gc` (`npm run bench` does), before a side
 * is measured: each side then starts without the other's garbage, that of making its inputs or
 * that of the parts run before it, which otherwise lands as a major collection (~125 ms seen in
 * the ingest part) in whichever side runs when the old generation fills.
 */
export const collectGarbage = (): void => (globalThis as { gc?: () => void }).gc?.()

/** The CLI's defaults, without the CLI library: the fast path (fastPath.ts) reads them too. */
export const DEFAULT_DATA_DIR = "./.planbridge/"
export const DEFAULT_PORT = 4317

/** The library requires a version; it is shown only by `--version`, which is not offered (cliEnvironment.ts). */
export const RUN_CONFIG = { version: "0.1.0" } as const

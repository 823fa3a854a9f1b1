/**
 * Whether the CLI colours what it prints: only on a terminal, and never when NO_COLOR is set
 * (https://no-color.org). Without the CLI library, so that the fast path (fastPath.ts) knows
 * when the help it keeps, rendered plain, is what the CLI would print.
 */
export const colorsOn = (stdoutIsTerminal: boolean, env: Readonly<Record<string, string | undefined>>): boolean =>
  stdoutIsTerminal && (env.NO_COLOR ?? "") === ""

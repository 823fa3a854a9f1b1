import { main } from "../../../src/cli/main.ts"

export interface CliRun {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** `planbridge …` in this process, stdout and stderr captured apart (no terminal: nothing cut or coloured). */
export const runCli = async (...args: ReadonlyArray<string>): Promise<CliRun> => {
  let stdout = ""
  let stderr = ""
  const code = await main(args, {
    out: (text) => {
      stdout += text
    },
    err: (text) => {
      stderr += text
    },
    columns: () => undefined,
    colors: () => false
  })
  return { code, stdout, stderr }
}

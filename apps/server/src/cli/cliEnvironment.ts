import * as CliConfig from "effect/cli/CliConfig"
import * as CliOutput from "effect/cli/CliOutput"
import * as GlobalFlag from "effect/cli/GlobalFlag"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Path from "effect/Path"
import * as ChildProcessSpawner from "effect/process/ChildProcessSpawner"
import * as Stdio from "effect/Stdio"
import * as Terminal from "effect/Terminal"
import { presenter } from "./presenter.ts"

const notUsed = (what: string) => Effect.die(`planbridge's CLI does not use ${what}`)

/**
 * What `effect/cli` runs in. The library asks for a file system, a terminal, a process spawner
 * and standard I/O because it can prompt interactively (its `--wizard`), read file-valued flags
 * and take argv from the process; planbridge uses none of that (`main` hands argv over and output
 * goes through `Io`), so instead of depending on `@effect/platform-node` these are stand-ins that
 * refuse, and the flags that would need them are not offered.
 */
const platform = Layer.mergeAll(
  FileSystem.layerNoop({}),
  Path.layer,
  Stdio.layerTest({}),
  Layer.succeed(
    Terminal.Terminal,
    Terminal.make({
      columns: Effect.sync(() => process.stdout.columns ?? 80),
      rows: Effect.sync(() => process.stdout.rows ?? 24),
      size: notUsed("the terminal's size"),
      readInput: notUsed("terminal input"),
      readLine: notUsed("terminal input"),
      display: () => notUsed("terminal display")
    })
  ),
  Layer.succeed(
    ChildProcessSpawner.ChildProcessSpawner,
    ChildProcessSpawner.make(() => notUsed("child processes"))
  )
)

/**
 * The built-in global flags: `--help`/`-h` and `--completions <shell>`. Left out: `--version`
 * (nothing to report beyond the package), `--wizard` (interactive; the stand-in terminal above
 * cannot serve it) and `--log-level` (it would shadow `serve --log-level`, which sets the
 * server's log level and takes `silent`).
 */
const builtIns = CliConfig.layer({ builtIns: [GlobalFlag.Help, GlobalFlag.Completions] })

export const cliEnvironment = Layer.mergeAll(platform, builtIns, CliOutput.layerPresenter(presenter))

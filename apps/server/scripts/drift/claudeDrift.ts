import { readFile } from "node:fs/promises"
import { join } from "node:path"
import { readDeclarations, diffDeclaration } from "./dtsDiff.ts"
import { readPackageJson, type ProviderReport, type Surface } from "./report.ts"

/**
 * Claude Agent SDK: it publishes type declarations, not a schema, so the gate compares the
 * declarations of the messages, tool inputs/outputs and callbacks `provider/claude/` decodes or
 * answers (`ClaudeNative.ts`, `ClaudePermissionBridge.ts`, `ClaudeProcess.ts`), each with every
 * declaration of its file it reaches.
 */

const PACKAGE = "@anthropic-ai/claude-agent-sdk"

const SURFACES: ReadonlyArray<readonly [file: string, types: ReadonlyArray<string>]> = [
  [
    "sdk.d.ts",
    [
      "SDKAssistantMessage",
      "SDKUserMessage",
      "SDKPartialAssistantMessage",
      "SDKSystemMessage",
      "SDKStatusMessage",
      "SDKResultMessage",
      "CanUseTool",
      "PermissionResult",
      "SpawnOptions",
      "SpawnedProcess"
    ]
  ],
  [
    "sdk-tools.d.ts",
    [
      "AskUserQuestionInput",
      "ExitPlanModeInput",
      "TodoWriteInput",
      "TodoWriteOutput",
      "TaskCreateInput",
      "TaskCreateOutput",
      "TaskUpdateInput",
      "TaskUpdateOutput",
      "TaskListOutput",
      "TaskGetOutput"
    ]
  ]
]

const declarations = async (modules: string, file: string) => {
  const path = join(modules, PACKAGE, file)
  return readDeclarations(path, await readFile(path, "utf8").catch(() => ""))
}

export const claudeDrift = async (pinnedModules: string, newestModules: string): Promise<ProviderReport> => {
  const surfaces: Array<Surface> = []
  for (const [file, types] of SURFACES) {
    const pinned = await declarations(pinnedModules, file)
    const newest = await declarations(newestModules, file)
    for (const type of types) surfaces.push({ label: `type ${type}`, result: diffDeclaration(pinned, newest, type) })
  }
  return {
    name: PACKAGE,
    pinned: (await readPackageJson(pinnedModules, PACKAGE))?.version ?? "?",
    newest: (await readPackageJson(newestModules, PACKAGE))?.version ?? "?",
    surfaces,
    refusedNew: [],
    notes: []
  }
}

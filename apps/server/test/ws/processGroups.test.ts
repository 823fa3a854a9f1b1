import { spawn, spawnSync, type ChildProcess } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { afterAll, afterEach, describe, expect, it } from "vitest"
import { startServer } from "../../src/http/HttpServer.ts"
import {
  GROUP_TOKEN_ENV,
  processGroupsDir,
  readProcStat,
  WATCHDOG_NAME,
  type RunRecord
} from "../../src/provider/ProcessGroups.ts"
import { connect } from "../support/wsClient.ts"

/**
 * Issue 13, item 1: provider processes survived a SIGKILL of the server (an agent that does not
 * exit when its stdin ends, and the tools it started), even past the next server's start and
 * clean stop. Now every provider runs under a parent-death SIGKILL, its process group is recorded
 * in the data dir, a watchdog ends the recorded groups when the server dies, and start-up recovery
 * ends what a run left behind, only once it proved a group is the recorded one.
 */
const root = fileURLToPath(new URL("../../../../", import.meta.url))
const dirs: Array<string> = []
/** Everything a test started or learned about, killed at the end whatever happened. */
const strays = new Set<number>()
const servers = new Set<ChildProcess>()
afterEach(() => {
  for (const server of servers) server.kill("SIGKILL")
  servers.clear()
})
afterAll(() => {
  for (const pid of strays) {
    try {
      process.kill(pid, "SIGKILL")
    } catch {
      // Gone, as it should be.
    }
  }
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }))
})
const tempDir = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  dirs.push(dir)
  return dir
}

/** Running, i.e. neither gone nor a zombie waiting to be reaped. */
const alive = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.startsWith("Z") === false
  } catch {
    return false
  }
}
/** Polls (bounded) until every pid is gone; true if they all went. */
const allGone = async (pids: ReadonlyArray<number>, ms = 3_000) => {
  const deadline = Date.now() + ms
  while (pids.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
  return pids.filter(alive)
}
const parentOf = (pid: number) => Number(readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ")[1])

interface ServerProcess {
  readonly child: ChildProcess
  readonly url: string
  readonly token: string
  readonly recovered: number
}

const startServerProcess = async (dataDir: string, pidsFile: string): Promise<ServerProcess> => {
  const child = spawn(
    process.execPath,
    [
      resolve(root, "apps/server/bin/run-ts.mjs"),
      resolve(root, "apps/server/test/support/lingeringAgentServer.ts"),
      dataDir,
      pidsFile
    ],
    { stdio: ["ignore", "pipe", "inherit"] }
  )
  servers.add(child)
  const line = await new Promise<string>((resolveLine, reject) => {
    createInterface({ input: child.stdout! }).once("line", resolveLine)
    child.once("exit", (code) => reject(new Error(`the server exited (${code}) before listening`)))
  })
  const ready = JSON.parse(line) as { port: number; token: string; recovered: number }
  return { child, url: `http://127.0.0.1:${ready.port}`, token: ready.token, recovered: ready.recovered }
}

/** Starts a Cursor session on the lingering agent: the pids of its wrapper (the group leader), itself and its tool. */
const startLingeringSession = async (server: ServerProcess, pidsFile: string) => {
  const client = await connect({ url: server.url, token: server.token })
  try {
    const cwd = tempDir("planbridge-pg-cwd-")
    const reply = await client.command({ type: "session.start", provider: "cursor", cwd, mode: "default" })
    if (reply.type === "error") throw new Error(`session.start: ${reply.error.code}: ${reply.error.message}`)
  } finally {
    await client.close()
  }
  const deadline = Date.now() + 5_000
  while (!existsSync(pidsFile) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
  const { agent, tool } = JSON.parse(readFileSync(pidsFile, "utf8")) as { agent: number; tool: number }
  const leader = readProcStat(agent)?.pgrp ?? -1
  for (const pid of [leader, agent, tool]) strays.add(pid)
  // The agent runs under tsx's wrapper, the server's direct child and its group's leader.
  expect(parentOf(leader)).toBe(server.child.pid)
  expect(readProcStat(tool)?.pgrp).toBe(leader)
  expect([leader, agent, tool].filter(alive)).toEqual([leader, agent, tool])
  return { leader, agent, tool }
}

const exitOf = (child: ChildProcess) =>
  new Promise<number | null>((resolveExit) => {
    if (child.exitCode !== null) return resolveExit(child.exitCode)
    child.once("exit", (code) => resolveExit(code))
  })

describe("provider process groups do not outlive the server", () => {
  it("SIGKILL of the server: the agent, the wrapper it runs under and the tool it started die with it", async () => {
    const dataDir = tempDir("planbridge-pg-")
    const pidsFile = join(tempDir("planbridge-pg-pids-"), "pids.json")
    const server = await startServerProcess(dataDir, pidsFile)
    const { leader, agent, tool } = await startLingeringSession(server, pidsFile)

    server.child.kill("SIGKILL")
    // The wrapper by its parent-death signal, the whole group by the watchdog.
    expect(await allGone([leader, agent, tool])).toEqual([])
  }, 15_000)

  it("a run killed with its watchdog: the parent-death signal ends the wrapper, the next start the rest", async () => {
    const dataDir = tempDir("planbridge-pg-")
    const pidsFile = join(tempDir("planbridge-pg-pids-"), "pids.json")
    const first = await startServerProcess(dataDir, pidsFile)
    const { leader, agent, tool } = await startLingeringSession(first, pidsFile)
    const watchdogs = readdirSync("/proc")
      .filter((name) => /^\d+$/.test(name))
      .map(Number)
      .filter((pid) => {
        try {
          const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8")
          return parentOf(pid) === first.child.pid && cmdline.includes(WATCHDOG_NAME)
        } catch {
          return false
        }
      })
    expect(watchdogs).toHaveLength(1)
    process.kill(watchdogs[0]!, "SIGKILL")
    first.child.kill("SIGKILL")

    // The parent-death signal reaches only the server's direct child; what it started lives on.
    expect(await allGone([leader])).toEqual([])
    expect([agent, tool].filter(alive)).toEqual([agent, tool])

    const secondPids = join(tempDir("planbridge-pg-pids-"), "pids.json")
    const second = await startServerProcess(dataDir, secondPids)
    expect(second.recovered).toBe(1)
    expect(await allGone([agent, tool])).toEqual([])

    // A clean stop ends its own sessions' groups, the agent that ignores its stdin's end included.
    const next = await startLingeringSession(second, secondPids)
    second.child.kill("SIGTERM")
    expect(await exitOf(second.child)).toBe(0)
    expect(await allGone([next.leader, next.agent, next.tool])).toEqual([])
    // The first run's record was cleared by the second, the second's own when it stopped.
    expect(readdirSync(processGroupsDir(dataDir))).toEqual([])
  }, 20_000)

  it("start-up recovery kills only groups it proves are the recorded ones", async () => {
    const dataDir = tempDir("planbridge-pg-")
    const token = (name: string) => `test-token-${name}-${process.pid}`
    /** A group whose leader lives: `sleep` in a process group of its own. */
    const leaderGroup = () => {
      const child = spawn("sleep", ["30"], { detached: true, stdio: "ignore" })
      strays.add(child.pid!)
      return { pid: child.pid!, startTime: readProcStat(child.pid!)!.startTime }
    }
    /** A group whose leader is gone: a shell that started `sleep` in its group, then exited. */
    const orphanGroup = async (env: Record<string, string>) => {
      const shell = spawn("sh", ["-c", "sleep 30 & echo $!; read x"], {
        detached: true,
        stdio: ["pipe", "pipe", "ignore"],
        env
      })
      const member = Number(await new Promise<string>((r) => createInterface({ input: shell.stdout! }).once("line", r)))
      strays.add(member)
      const startTime = readProcStat(shell.pid!)!.startTime
      shell.stdin!.end("\n")
      await exitOf(shell)
      return { pid: shell.pid!, startTime, member }
    }
    const ours = leaderGroup()
    const reused = leaderGroup()
    const PATH = process.env.PATH ?? "/usr/bin:/bin"
    const orphanOurs = await orphanGroup({ PATH, [GROUP_TOKEN_ENV]: token("orphan-ours") })
    const orphanStranger = await orphanGroup({ PATH, [GROUP_TOKEN_ENV]: "someone-else" })
    const livingOwners = leaderGroup()

    const bootId = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim()
    const group = (g: { pid: number; startTime: number }, name: string) => ({
      pgid: g.pid,
      startTime: g.startTime,
      token: token(name),
      command: "test",
      recordedAt: new Date().toISOString()
    })
    const gone = spawnSync("true").pid
    const write = (record: RunRecord) => {
      mkdirSync(processGroupsDir(dataDir), { recursive: true })
      const file = join(processGroupsDir(dataDir), `run-${record.owner.pid}-${record.owner.startTime}.json`)
      writeFileSync(file, JSON.stringify(record), { mode: 0o600 })
      return file
    }
    write({
      version: 1,
      bootId,
      owner: { pid: gone, startTime: 1 },
      groups: [
        group(ours, "ours"),
        // The pid names another process now: its start time is not the recorded one.
        group({ pid: reused.pid, startTime: reused.startTime + 1 }, "reused"),
        group(orphanOurs, "orphan-ours"),
        group(orphanStranger, "orphan-stranger")
      ]
    })
    // Another server on the same data dir that still runs (as far as /proc can tell).
    const otherServer = leaderGroup()
    const owner = { pid: otherServer.pid, startTime: otherServer.startTime }
    const kept = write({ version: 1, bootId, owner, groups: [group(livingOwners, "living")] })

    const server = await startServer({ dataDir, host: "127.0.0.1", port: 0, logLevel: "silent", providers: [] })
    try {
      expect(server.recovery.processGroups).toBe(2)
      expect(await allGone([ours.pid, orphanOurs.member])).toEqual([])
      const spared = [reused.pid, orphanStranger.member, livingOwners.pid]
      expect(spared.filter(alive)).toEqual(spared)
      expect(existsSync(kept)).toBe(true)
    } finally {
      await server.close()
    }
  }, 15_000)
})

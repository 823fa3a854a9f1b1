import { spawn, spawnSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { request } from "node:http"
import { fileURLToPath } from "node:url"
import { tempDir } from "../test/support/ingestionRuntime.ts"

/** The package's bin, as `npx planbridge` runs it. */
const bin = fileURLToPath(new URL("../bin/planbridge.cjs", import.meta.url))
/** No provider credentials: start-up and idle memory of the server alone, as on a fresh machine. */
const env = () => {
  const copy: NodeJS.ProcessEnv = { ...process.env }
  for (const name of ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "CURSOR_API_KEY", "CURSOR_AUTH_TOKEN", "PLANBRIDGE_TOKEN"])
    delete copy[name]
  return copy
}
const median = (xs: Array<number>) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

/** CPU time (ms) of this process's waited-for children (Linux: cutime + cstime, in clock ticks of 10 ms). */
const childrenCpuMs = (): number => {
  const fields = readFileSync("/proc/self/stat", "utf8").split(") ")[1]!.split(" ")
  return (Number(fields[13]) + Number(fields[14])) * 10
}

/** Wall and CPU time of a node command, from spawn to exit; the medians of `runs`. */
const timeNode = (args: ReadonlyArray<string>, runs = 7) => {
  const wall: Array<number> = []
  const cpu: Array<number> = []
  for (let i = 0; i < runs; i++) {
    const started = performance.now()
    const cpuBefore = childrenCpuMs()
    const result = spawnSync(process.execPath, args, { env: env(), encoding: "utf8" })
    wall.push(performance.now() - started)
    cpu.push(childrenCpuMs() - cpuBefore)
    if (result.status !== 0) throw new Error(`node ${args.join(" ")} failed: ${result.stderr}`)
  }
  return { wallMs: median(wall), cpuMs: median(cpu) }
}

const answers = (url: string) =>
  new Promise<boolean>((resolve) => {
    const req = request(url, (res) => {
      res.resume()
      resolve(true)
    })
    req.once("error", () => resolve(false))
    req.end()
  })

const rssMbOf = (pid: number): number => {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("VmRSS:"))
  return Number(line?.split(/\s+/)[1] ?? NaN) / 1024
}

/** CPU time (ms) a running process has used so far (Linux: utime + stime, in 10 ms ticks). */
const cpuMsOf = (pid: number): number => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return (Number(fields[11]) + Number(fields[12])) * 10
}

/** `planbridge serve` from spawn until it answers HTTP, then its RSS once idle for `idleMs`. */
const timeServe = async (dataDir: string, idleMs: number) => {
  const started = performance.now()
  const child = spawn(process.execPath, [bin, "serve", "--port", "0", "--log-level", "silent", "--data-dir", dataDir], {
    env: env(),
    stdio: ["ignore", "pipe", "inherit"]
  })
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = ""
      child.stdout.on("data", (chunk: Buffer) => {
        out += String(chunk)
        const match = /listening on (http:\/\/\S+)/.exec(out)
        if (match !== null) resolve(match[1]!)
      })
      child.once("exit", (code) => reject(new Error(`serve exited with ${code}`)))
    })
    while (!(await answers(url))) await new Promise((r) => setTimeout(r, 5))
    const answeredMs = performance.now() - started
    const cpuMs = cpuMsOf(child.pid!)
    await new Promise((r) => setTimeout(r, idleMs))
    return { answeredMs, cpuMs, idleRssMb: rssMbOf(child.pid!) }
  } finally {
    child.kill("SIGTERM")
    await new Promise((r) => child.once("exit", r))
  }
}

/** Start-up of the CLI and the server as users run them (bin/planbridge.cjs), and idle memory. */
export const benchStartup = async () => {
  const scratch = tempDir("bench-startup")
  try {
    // Node itself, in the same run: on a loaded machine its start-up alone can take 100s of ms.
    const bareNode = timeNode(["-e", "0"])
    const help = timeNode([bin, "--help"])
    // Seven starts (the first also idles for the RSS): three let one slow start on a shared machine move the median.
    const serves = []
    for (let i = 0; i < 7; i++) serves.push(await timeServe(scratch.dir, i === 0 ? 1_000 : 0))
    // After the starts: `token` reads the token the server stored, and never creates one.
    const token = timeNode([bin, "token", "--data-dir", scratch.dir])
    return {
      bareNode,
      help,
      token,
      serveMs: median(serves.map((s) => s.answeredMs)),
      serveCpuMs: median(serves.map((s) => s.cpuMs)),
      idleRssMb: serves[0]!.idleRssMb
    }
  } finally {
    scratch.cleanup()
  }
}

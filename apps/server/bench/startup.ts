import { spawn, spawnSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { request } from "node:http"
import { fileURLToPath } from "node:url"
import { tempDir } from "../test/support/ingestionRuntime.ts"

const bin = fileURLToPath(new URL("../bin/planbridge.mjs", import.meta.url))
/** No provider credentials: start-up and idle memory of the server alone, as on a fresh machine. */
const env = () => {
  const copy: NodeJS.ProcessEnv = { ...process.env }
  for (const name of ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "CURSOR_API_KEY", "CURSOR_AUTH_TOKEN", "PLANBRIDGE_TOKEN"])
    delete copy[name]
  return copy
}
const median = (xs: Array<number>) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

/** Wall time of a CLI command, from spawn to exit; the median of `runs`. */
const timeCommand = (args: ReadonlyArray<string>, runs = 5): number => {
  const times: Array<number> = []
  for (let i = 0; i < runs; i++) {
    const started = performance.now()
    const result = spawnSync(process.execPath, [bin, ...args], { env: env(), encoding: "utf8" })
    times.push(performance.now() - started)
    if (result.status !== 0) throw new Error(`planbridge ${args.join(" ")} failed: ${result.stderr}`)
  }
  return median(times)
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
    await new Promise((r) => setTimeout(r, idleMs))
    return { answeredMs, idleRssMb: rssMbOf(child.pid!) }
  } finally {
    child.kill("SIGTERM")
    await new Promise((r) => child.once("exit", r))
  }
}

/** Start-up of the CLI and the server as users run them (bin/planbridge.mjs), and idle memory. */
export const benchStartup = async () => {
  const scratch = tempDir("bench-startup")
  try {
    const help = timeCommand(["--help"])
    const token = timeCommand(["token", "--data-dir", scratch.dir])
    const serves = []
    for (let i = 0; i < 3; i++) serves.push(await timeServe(scratch.dir, i === 0 ? 1_000 : 0))
    return {
      helpMs: help,
      tokenMs: token,
      serveMs: median(serves.map((s) => s.answeredMs)),
      idleRssMb: serves[0]!.idleRssMb
    }
  } finally {
    scratch.cleanup()
  }
}

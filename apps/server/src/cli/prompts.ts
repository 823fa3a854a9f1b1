import { resolve } from "node:path"
import { loadOrCreateToken } from "../http/Security.ts"
import { parseCommandArgs, registerCommand } from "./main.ts"
import { DEFAULT_PORT } from "./serve.ts"

/**
 * `planbridge prompts list|show|answer|cancel` — the operator API from a terminal. It talks to
 * the running server (answers must reach the live provider session that asked), with the
 * token from the data dir or PLANBRIDGE_TOKEN.
 */
const USAGE = `usage:
  planbridge prompts list [--status pending|resolved] [--provider P] [--thread ID] [--json]
  planbridge prompts show PROMPT_ID [--json]
  planbridge prompts answer PROMPT_ID (--option QUESTION=OPTION | --text QUESTION=TEXT)… [--client-request-id ID] [--json]
  planbridge prompts cancel PROMPT_ID [--json]
common: --url URL (default http://127.0.0.1:${DEFAULT_PORT}), --data-dir DIR`

type Json = { readonly [key: string]: unknown }

const call = async (url: string, token: string, method: "GET" | "POST", path: string, body?: unknown) => {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  return { status: res.status, json: (await res.json()) as Json }
}

const splitPair = (pair: string, flag: string): [string, string] => {
  const at = pair.indexOf("=")
  if (at <= 0) throw Object.assign(new Error(`${flag} takes QUESTION=VALUE, got '${pair}'`), { code: "ERR_PARSE_ARGS_INVALID_OPTION_VALUE" })
  return [pair.slice(0, at), pair.slice(at + 1)]
}

const table = (rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)))
  return rows.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd()).join("\n") + "\n"
}

registerCommand(
  "prompts",
  async (args) => {
    const { values, positionals } = parseCommandArgs(args, {
      url: { type: "string", default: `http://127.0.0.1:${DEFAULT_PORT}` },
      json: { type: "boolean", default: false },
      status: { type: "string" },
      provider: { type: "string" },
      thread: { type: "string" },
      option: { type: "string", multiple: true },
      text: { type: "string", multiple: true },
      "client-request-id": { type: "string" }
    })
    const [action, promptId] = positionals
    const token = process.env.PLANBRIDGE_TOKEN ?? loadOrCreateToken(resolve(values["data-dir"]))
    const url = values.url.replace(/\/$/, "")
    const out = (result: { status: number; json: Json }, render: (json: Json) => string): number => {
      if (values.json) process.stdout.write(`${JSON.stringify(result.json, null, 2)}\n`)
      else if (result.status === 200) process.stdout.write(render(result.json))
      else {
        const error = result.json.error as { code: string; message: string } | undefined
        process.stderr.write(`planbridge prompts: ${error?.code ?? result.status}: ${error?.message ?? "request failed"}\n`)
      }
      return result.status === 200 ? 0 : 1
    }
    try {
      switch (action) {
        case "list": {
          const query = new URLSearchParams()
          if (values.status !== undefined) query.set("status", values.status)
          if (values.provider !== undefined) query.set("provider", values.provider)
          if (values.thread !== undefined) query.set("threadId", values.thread)
          return out(await call(url, token, "GET", `/api/prompts?${query}`), (json) => {
            const prompts = json.prompts as ReadonlyArray<{ promptId: string; provider: string; status: string; resolution: string | null; createdAt: string; prompt: { questions: ReadonlyArray<{ label: string }> } }>
            return table([
              ["PROMPT", "PROVIDER", "STATUS", "RESOLUTION", "CREATED", "FIRST QUESTION"],
              ...prompts.map((p) => [p.promptId, p.provider, p.status, p.resolution ?? "-", p.createdAt, p.prompt.questions[0]?.label ?? ""])
            ])
          })
        }
        case "show":
          if (promptId === undefined) break
          return out(await call(url, token, "GET", `/api/prompts/${encodeURIComponent(promptId)}`), (json) => `${JSON.stringify(json, null, 2)}\n`)
        case "answer": {
          if (promptId === undefined) break
          const byQuestion = new Map<string, { questionId: string; selectedOptionIds?: Array<string>; text?: string }>()
          const entry = (q: string) => byQuestion.get(q) ?? byQuestion.set(q, { questionId: q }).get(q)!
          for (const pair of values.option ?? []) {
            const [q, o] = splitPair(pair, "--option")
            const e = entry(q)
            e.selectedOptionIds = [...(e.selectedOptionIds ?? []), o]
          }
          for (const pair of values.text ?? []) {
            const [q, t] = splitPair(pair, "--text")
            entry(q).text = t
          }
          const body = { answers: [...byQuestion.values()], ...(values["client-request-id"] === undefined ? {} : { clientRequestId: values["client-request-id"] }) }
          return out(await call(url, token, "POST", `/api/prompts/${encodeURIComponent(promptId)}/answer`, body), () => `answered ${promptId}\n`)
        }
        case "cancel":
          if (promptId === undefined) break
          return out(await call(url, token, "POST", `/api/prompts/${encodeURIComponent(promptId)}/cancel`, {}), () => `cancelled ${promptId}\n`)
      }
    } catch (error) {
      if (error instanceof TypeError && String(error.cause ?? "").includes("ECONNREFUSED")) {
        process.stderr.write(`planbridge prompts: no server at ${url} (start it with 'planbridge serve')\n`)
        return 1
      }
      throw error
    }
    process.stderr.write(`${USAGE}\n`)
    return 2
  },
  "list, show, answer or cancel prompts through the running server (--json for JSON)"
)

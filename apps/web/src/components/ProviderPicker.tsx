import type { OperatingMode, ProviderInfo } from "@planbridge/contracts"
import { useState } from "react"

const CWD_KEY = "planbridge.cwd"

/**
 * The providers of `welcome`, each with its readiness, its hint when it is not ready, and a demo
 * badge. A session starts in plan mode where the provider has one.
 */
export const ProviderPicker = (props: {
  readonly providers: ReadonlyArray<ProviderInfo>
  readonly onStart: (provider: ProviderInfo, cwd: string, mode: OperatingMode) => Promise<void>
}) => {
  const [cwd, setCwd] = useState(() => localStorage.getItem(CWD_KEY) ?? "")
  const [busy, setBusy] = useState(false)
  return (
    <section className="panel provider-picker" aria-label="Providers">
      <h2>New session</h2>
      <label className="field">
        Working directory
        <input
          value={cwd}
          placeholder="/path/to/project"
          aria-label="Working directory"
          onChange={(e) => {
            setCwd(e.target.value)
            localStorage.setItem(CWD_KEY, e.target.value)
          }}
        />
      </label>
      <ul className="providers">
        {props.providers.map((p) => {
          const ready = p.ready !== false
          const mode: OperatingMode = p.capabilities.supportsPlanMode ? "plan" : "default"
          return (
            <li key={p.provider} className="provider" data-provider={p.provider}>
              <div className="provider-name">
                {p.label ?? p.provider}
                {p.demo === true && <span className="badge badge-demo">demo</span>}
                <span className={`badge ${ready ? "badge-ok" : "badge-warning"}`}>{ready ? "ready" : "not ready"}</span>
              </div>
              {p.auth?.label !== undefined && <div className="muted">{p.auth.label}</div>}
              {!ready && p.auth?.hint !== undefined && <div className="hint">{p.auth.hint}</div>}
              <button
                disabled={!ready || busy || cwd.trim() === ""}
                onClick={() => {
                  setBusy(true)
                  void props.onStart(p, cwd.trim(), mode).finally(() => setBusy(false))
                }}
              >
                {mode === "plan" ? "Start a plan session" : "Start a session"}
              </button>
            </li>
          )
        })}
      </ul>
      {props.providers.length === 0 && <p className="muted">No provider is offered by this server.</p>}
    </section>
  )
}

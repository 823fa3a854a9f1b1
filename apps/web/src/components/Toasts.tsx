import { useStore } from "../hooks.ts"
import { dismissToast, toasts } from "../state/toasts.ts"

export const Toasts = () => {
  const list = useStore(toasts)
  return (
    <div className="toasts" aria-live="polite">
      {list.map((t) => (
        <div key={t.id} className={`toast toast-${t.level}`} role={t.level === "error" ? "alert" : "status"}>
          <span>{t.text}</span>
          <button aria-label="Dismiss" onClick={() => dismissToast(t.id)}>
            ×
          </button>
        </div>
      ))}
    </div>
  )
}

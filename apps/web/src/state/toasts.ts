import { ExternalStore } from "./ExternalStore.ts"

export interface Toast {
  readonly id: number
  readonly level: "info" | "warning" | "error"
  readonly text: string
}

let nextId = 0

/** Warnings and errors, shown for a while at the corner of the screen. */
export const toasts = new ExternalStore<ReadonlyArray<Toast>>([])

export const showToast = (level: Toast["level"], text: string, ms = 6000): void => {
  const id = ++nextId
  // The same message again replaces the one on screen instead of stacking up.
  toasts.update((list) => [...list.filter((t) => t.text !== text).slice(-3), { id, level, text }])
  setTimeout(() => dismissToast(id), ms)
}

export const dismissToast = (id: number): void => toasts.update((list) => list.filter((t) => t.id !== id))

/** A failed command as a toast: its typed code, its message and, for schema errors, its path. */
export const toastError = (what: string, error: unknown): void => {
  const e = error as { code?: string; message?: string; path?: ReadonlyArray<string | number> }
  const path = e.path !== undefined && e.path.length > 0 ? ` at ${e.path.join(".")}` : ""
  showToast("error", `${what}: ${e.code ?? "error"}: ${e.message ?? String(error)}${path}`)
}

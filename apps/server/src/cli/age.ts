/**
 * Durations as people read them in a terminal ("3 min", "2 h"): operators scan a prompt list for
 * what has been waiting long, which an ISO timestamp makes them compute.
 */
export const duration = (ms: number): string => {
  const seconds = Math.max(0, Math.round(ms / 1000))
  if (seconds < 60) return `${seconds} s`
  const minutes = Math.floor(seconds / 60)
  if (minutes < 60) return `${minutes} min`
  const hours = Math.floor(minutes / 60)
  if (hours < 48) return `${hours} h`
  return `${Math.floor(hours / 24)} days`
}

/** How long ago `iso` was, seen at `now`: "just now", "45 s ago", "3 min ago", "2 h ago", "4 days ago". */
export const ago = (iso: string, now: Date): string => {
  const ms = now.getTime() - Date.parse(iso)
  return ms < 5_000 ? "just now" : `${duration(ms)} ago`
}

/** An offset inside a short sequence (a prompt's timeline): "+0.0 s", "+3.5 s", "+2 min". */
export const offset = (fromIso: string, toIso: string): string => {
  const ms = Math.max(0, Date.parse(toIso) - Date.parse(fromIso))
  return ms < 60_000 ? `+${(ms / 1000).toFixed(1)} s` : `+${duration(ms)}`
}

/** How long a prompt's card is waited for: the thread's history arrives after the thread opens. */
export const REVEAL_WAIT_MS = 30_000

/**
 * Scrolls a prompt's card (`data-prompt`) into view and marks it (`data-revealed`) once it is
 * rendered, waiting at most `REVEAL_WAIT_MS`. Answers a function that stops waiting.
 */
export const revealPrompt = (promptId: string): (() => void) => {
  const find = () => document.querySelector(`[data-prompt="${CSS.escape(promptId)}"]`)
  const reveal = (card: Element) => {
    for (const earlier of document.querySelectorAll("[data-revealed]")) earlier.removeAttribute("data-revealed")
    card.setAttribute("data-revealed", "true")
    card.scrollIntoView({ block: "center" })
  }
  const now = find()
  if (now !== null) {
    reveal(now)
    return () => undefined
  }
  const observer = new MutationObserver(() => {
    const card = find()
    if (card === null) return
    stop()
    reveal(card)
  })
  const timer = setTimeout(() => observer.disconnect(), REVEAL_WAIT_MS)
  const stop = () => {
    observer.disconnect()
    clearTimeout(timer)
  }
  observer.observe(document.body, { childList: true, subtree: true })
  return stop
}

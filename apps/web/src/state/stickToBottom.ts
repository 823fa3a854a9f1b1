import { useEffect, useLayoutEffect, useRef, type RefObject } from "react"

/** How close to the bottom still counts as "at the bottom" (a line or two of slack). */
const SLACK_PX = 80

const scrollerOf = (el: HTMLElement | null): HTMLElement | undefined => {
  for (let p = el?.parentElement ?? null; p !== null; p = p.parentElement) {
    const overflow = getComputedStyle(p).overflowY
    if (overflow === "auto" || overflow === "scroll") return p
  }
  return undefined
}

/**
 * Keeps the scrolling area around `anchor` at its bottom while `content` changes, as a chat does,
 * unless the user scrolled up to read: then it stays where they are.
 */
export const useStickToBottom = (anchor: RefObject<HTMLElement | null>, content: unknown): void => {
  const atBottom = useRef(true)
  useEffect(() => {
    const scroller = scrollerOf(anchor.current)
    if (scroller === undefined) return
    const onScroll = () => {
      atBottom.current = scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < SLACK_PX
    }
    scroller.addEventListener("scroll", onScroll, { passive: true })
    return () => scroller.removeEventListener("scroll", onScroll)
  }, [anchor])
  useLayoutEffect(() => {
    const scroller = scrollerOf(anchor.current)
    if (scroller !== undefined && atBottom.current) scroller.scrollTop = scroller.scrollHeight
  }, [anchor, content])
}

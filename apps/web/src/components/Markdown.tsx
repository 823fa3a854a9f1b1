import MarkdownIt from "markdown-it"
import { createElement, type ReactNode } from "react"

// Raw HTML is off and nothing is ever set as innerHTML: tokens become React elements, so any
// markup in the text is shown as text.
const parser = new MarkdownIt({ html: false, linkify: false, typographer: false })
type Token = ReturnType<typeof parser.parse>[number]

const SAFE_TAGS = new Set([
  "p",
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "ul",
  "ol",
  "li",
  "blockquote",
  "em",
  "strong",
  "s",
  "code",
  "pre",
  "hr",
  "br",
  "a",
  "table",
  "thead",
  "tbody",
  "tr",
  "th",
  "td"
])

const safeHref = (href: string | number | null): string | undefined =>
  typeof href === "string" && /^(https?:|mailto:)/i.test(href) ? href : undefined

interface Frame {
  readonly tag: string
  readonly props: Record<string, string>
  readonly children: Array<ReactNode>
}

const build = (tokens: ReadonlyArray<Token>, root: Array<ReactNode>): void => {
  const stack: Array<Frame> = []
  const out = () => stack.at(-1)?.children ?? root
  for (const token of tokens) {
    if (token.nesting === 1) {
      const props: Record<string, string> = {}
      if (token.tag === "a") {
        const href = safeHref(token.attrGet("href"))
        if (href !== undefined) Object.assign(props, { href, rel: "noopener noreferrer", target: "_blank" })
      }
      if (token.tag === "ol" && token.attrGet("start") !== null) props.start = String(token.attrGet("start"))
      stack.push({ tag: SAFE_TAGS.has(token.tag) ? token.tag : "span", props, children: [] })
      continue
    }
    if (token.nesting === -1) {
      const frame = stack.pop()
      if (frame !== undefined)
        out().push(createElement(frame.tag, { key: out().length, ...frame.props }, ...frame.children))
      continue
    }
    const key = out().length
    switch (token.type) {
      case "inline":
        build(token.children ?? [], out())
        break
      case "text":
      case "html_inline":
      case "html_block":
        out().push(token.content)
        break
      case "code_inline":
        out().push(createElement("code", { key }, token.content))
        break
      case "fence":
      case "code_block":
        out().push(createElement("pre", { key }, createElement("code", null, token.content)))
        break
      case "softbreak":
        out().push("\n")
        break
      case "hardbreak":
        out().push(createElement("br", { key }))
        break
      case "hr":
        out().push(createElement("hr", { key }))
        break
      case "image":
        out().push(token.content)
        break
    }
  }
}

/** Markdown rendered safely (CommonMark by markdown-it, no raw HTML, only http(s)/mailto links). */
export const Markdown = ({ source }: { readonly source: string }) => {
  const nodes: Array<ReactNode> = []
  build(parser.parse(source, {}), nodes)
  return <div className="markdown">{nodes}</div>
}

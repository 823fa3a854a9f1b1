import * as acp from "@agentclientprotocol/sdk/unstable"

/**
 * An ACP prompt as the text of a Planbridge turn (`turn.start` takes text): text blocks as they
 * are, an embedded text resource as its URI and contents, a resource link as its URI. Images,
 * audio and binary resources are refused with their path: `initialize` does not offer them.
 */
export const promptText = (prompt: ReadonlyArray<acp.ContentBlock>): string => {
  const parts = prompt.map((block, index): string => {
    switch (block.type) {
      case "text":
        return block.text
      case "resource_link":
        return `[${block.name}](${block.uri})`
      case "resource":
        if ("text" in block.resource)
          return `<resource uri="${block.resource.uri}">\n${block.resource.text}\n</resource>`
        throw refused(index, "a binary resource")
      default:
        throw refused(index, `a content block of type '${block.type}'`)
    }
  })
  const text = parts.join("\n\n")
  if (text.trim().length === 0) throw acp.RequestError.invalidParams({ path: ["prompt"] }, "the prompt has no text")
  return text
}

const refused = (index: number, what: string): acp.RequestError =>
  acp.RequestError.invalidParams(
    { path: ["prompt", index] },
    `Planbridge sends its agents text: ${what} cannot be sent (promptCapabilities)`
  )

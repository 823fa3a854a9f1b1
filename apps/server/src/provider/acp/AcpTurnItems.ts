import { ItemId, type RawNative, type TurnId } from "@planbridge/contracts"
import { asJson, rawOf, type EventDraft } from "../kernel/EventDraft.ts"
import { isTerminal, itemStatusOf, itemTypeOfKind, mergeToolCall } from "./AcpItems.ts"
import type * as N from "./AcpNative.ts"
import { definedFields } from "../../util/definedFields.ts"

type Drafts = Array<EventDraft>

export type StreamKind = "assistant_text" | "reasoning_text"

interface OpenText {
  readonly itemId: ItemId
  readonly streamKind: StreamKind
  text: string
}

interface ToolState {
  readonly itemId: ItemId
  readonly turnId: TurnId
  fields: N.ToolCallFields
  completed: boolean
}

/**
 * The items a turn produces from `session/update`: assistant and reasoning text (ACP sends bare
 * chunks, so consecutive chunks of one kind form one item, closed by the next item or the end
 * of the turn) and tool calls (an update carries only the fields that changed). The translator
 * decodes and decides whether a turn is open; this only keeps the items' state.
 */
export class TurnItems {
  private open: OpenText | undefined
  private textSeq = 0
  private readonly tools = new Map<string, ToolState>()

  /** A new turn starts without open text; whatever an unfinished turn left open is dropped. */
  startTurn(): void {
    this.open = undefined
  }

  /** Completes the open text item, if a turn is open and has one. */
  closeText(turnId: TurnId | undefined): Drafts {
    const open = this.open
    if (turnId === undefined || open === undefined) return []
    this.open = undefined
    return [
      {
        type: "item.completed",
        turnId,
        itemId: open.itemId,
        raw: rawOf("planbridge", "text.closed", null),
        payload: {
          itemType: open.streamKind === "assistant_text" ? "assistant_message" : "reasoning",
          status: "completed",
          text: open.text
        }
      }
    ]
  }

  text(turnId: TurnId, streamKind: StreamKind, text: string, raw: RawNative): Drafts {
    if (text.length === 0) return []
    const out: Drafts = []
    let open = this.open
    if (open === undefined || open.streamKind !== streamKind) {
      out.push(...this.closeText(turnId))
      this.textSeq += 1
      open = {
        itemId: ItemId.make(`${turnId}:${streamKind === "assistant_text" ? "text" : "reasoning"}:${this.textSeq}`),
        streamKind,
        text: ""
      }
      this.open = open
      out.push({
        type: "item.started",
        turnId,
        itemId: open.itemId,
        raw,
        payload: { itemType: streamKind === "assistant_text" ? "assistant_message" : "reasoning", status: "inProgress" }
      })
    }
    open.text += text
    out.push({ type: "content.delta", turnId, itemId: open.itemId, raw, payload: { streamKind, delta: text } })
    return out
  }

  toolCall(turnId: TurnId, update: N.ToolCallFields, raw: RawNative): Drafts {
    const out: Drafts = this.closeText(turnId)
    // Mock models and some agents reuse tool-call ids across turns: a new turn, a new item.
    const previous = this.tools.get(update.toolCallId)
    const known = previous?.turnId === turnId ? previous : undefined
    const fields = mergeToolCall(known?.fields, update)
    const status = itemStatusOf(fields.status)
    const payload = {
      itemType: itemTypeOfKind(fields.kind),
      status,
      ...(typeof fields.title === "string" ? { title: fields.title } : {}),
      toolName: fields.kind ?? "other",
      data: asJson({
        toolCallId: fields.toolCallId,
        ...definedFields({ rawInput: fields.rawInput }),
        ...definedFields({ rawOutput: fields.rawOutput }),
        ...(fields.content === undefined || fields.content === null ? {} : { content: fields.content })
      })
    }
    if (known === undefined) {
      const itemId = ItemId.make(`${turnId}:tool:${update.toolCallId}`)
      this.tools.set(update.toolCallId, { itemId, turnId, fields, completed: isTerminal(status) })
      out.push({ type: "item.started", turnId, itemId, raw, payload })
      if (isTerminal(status)) out.push({ type: "item.completed", turnId, itemId, raw, payload })
      return out
    }
    known.fields = fields
    if (known.completed) {
      out.push({ type: "item.updated", turnId, itemId: known.itemId, raw, payload })
    } else {
      known.completed = isTerminal(status)
      out.push({
        type: known.completed ? "item.completed" : "item.updated",
        turnId,
        itemId: known.itemId,
        raw,
        payload
      })
    }
    return out
  }

  /** The item id of a tool call announced earlier in `turnId`, for requests that name it. */
  toolItemId(toolCallId: string | undefined, turnId: TurnId | undefined): ItemId | undefined {
    const tool = toolCallId === undefined ? undefined : this.tools.get(toolCallId)
    return tool !== undefined && tool.turnId === turnId ? tool.itemId : undefined
  }
}

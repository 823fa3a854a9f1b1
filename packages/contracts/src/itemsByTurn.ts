import type { ItemView } from "./snapshot.ts"

/** A view's fields made writable, for the fold that builds it. */
export type Mutable<T> = { -readonly [K in keyof T]: T[K] }

/**
 * Items by turn, then by item id: an item is keyed within its turn, as the server's projection
 * keys it, so an id a later turn uses again is a new item (EVENTS.md, "Ids"). Nested maps rather
 * than a composed key: ids may contain any character.
 */
export class ItemsByTurn {
  private readonly turns = new Map<string, Map<string, Mutable<ItemView>>>()
  get(turnId: string, itemId: string): Mutable<ItemView> | undefined {
    return this.turns.get(turnId)?.get(itemId)
  }
  set(item: Mutable<ItemView>): void {
    const ofTurn = this.turns.get(item.turnId)
    if (ofTurn === undefined) this.turns.set(item.turnId, new Map([[item.itemId, item]]))
    else ofTurn.set(item.itemId, item)
  }
  *values(): Generator<Mutable<ItemView>> {
    for (const ofTurn of this.turns.values()) yield* ofTurn.values()
  }
}

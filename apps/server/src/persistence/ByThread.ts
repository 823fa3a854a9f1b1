/** Values by thread and id, without composing a key string (an id may contain any character). */
export const byThread = <V>() => {
  const threads = new Map<string, Map<string, V>>()
  return {
    get: (threadId: string, id: string): V | undefined => threads.get(threadId)?.get(id),
    set: (threadId: string, id: string, value: V): void => {
      const ids = threads.get(threadId)
      if (ids === undefined) threads.set(threadId, new Map([[id, value]]))
      else ids.set(id, value)
    },
    values: function* (): Generator<V> {
      for (const ids of threads.values()) yield* ids.values()
    },
    clear: (): void => threads.clear()
  }
}

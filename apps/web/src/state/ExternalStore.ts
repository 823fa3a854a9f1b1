/** A value that React reads with `useSyncExternalStore`: a new object on every change, listeners told. */
export class ExternalStore<T> {
  private readonly listeners = new Set<() => void>()

  constructor(private value: T) {}

  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  readonly getSnapshot = (): T => this.value

  update(next: (value: T) => T): void {
    this.value = next(this.value)
    for (const listener of [...this.listeners]) listener()
  }
}

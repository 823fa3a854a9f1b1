import { Effect, Exit, Scope } from "effect"
import { makeThreadHub } from "../../src/ws/ThreadHub.ts"

/** A thread hub over `store` in a scope of its own, outside any server; `stop` closes the scope. */
export const startHub = async (...args: Parameters<typeof makeThreadHub>) => {
  const scope = Scope.makeUnsafe()
  const hub = await Effect.runPromise(Scope.provide(scope)(makeThreadHub(...args)))
  return { ...hub, stop: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

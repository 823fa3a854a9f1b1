import type { PlanbridgeClient, ThreadStore } from "@planbridge/client"
import type { ThreadId } from "@planbridge/contracts"
import { useEffect, useRef, useState, useSyncExternalStore } from "react"
import { useStore } from "../hooks.ts"
import type { ExternalStore } from "../state/ExternalStore.ts"
import { sessionEndView } from "../state/sessionEnd.ts"
import { useStickToBottom } from "../state/stickToBottom.ts"
import type { ThreadExtras } from "../state/threadExtras.ts"
import { toastError } from "../state/toasts.ts"
import { Checklist } from "./Checklist.tsx"
import { Composer } from "./Composer.tsx"
import { ModeToggle } from "./ModeToggle.tsx"
import { OlderTurns } from "./OlderTurns.tsx"
import { ResumeBar } from "./ResumeBar.tsx"
import { ThreadGone } from "./ThreadGone.tsx"
import { ThreadTitle } from "./ThreadTitle.tsx"
import { Timeline } from "./Timeline.tsx"

interface Props {
  readonly client: PlanbridgeClient
  readonly threadId: ThreadId
  readonly extras: ExternalStore<ThreadExtras>
}

/** One thread: follows it (from its first event where the server still has it), then renders it. */
export const ThreadView = (props: Props) => {
  const [store, setStore] = useState<ThreadStore | undefined>(undefined)
  useEffect(() => {
    let live = true
    props.client.follow(props.threadId, { fromStart: true }).then(
      (s) => live && setStore(s),
      (e) => toastError("thread.subscribe", e)
    )
    return () => {
      live = false
    }
  }, [props.client, props.threadId])
  if (store === undefined) return <p className="muted">Loading the thread…</p>
  return <ThreadBody {...props} store={store} />
}

const ThreadBody = (props: Props & { readonly store: ThreadStore }) => {
  const thread = useStore(props.store)
  const extras = useStore(props.extras)
  const gone = useSyncExternalStore(props.store.subscribe, () => props.store.gone)
  const bottom = useRef<HTMLDivElement | null>(null)
  useStickToBottom(bottom, thread)
  if (thread === undefined) return <p className="muted">Loading the thread…</p>
  const capabilities = thread.capabilities
  const ended = gone === undefined ? sessionEndView(thread, extras.lastExit) : undefined
  return (
    <div className="thread-view" data-thread={thread.threadId}>
      <header className="thread-header">
        <ThreadTitle thread={thread} started={extras.started} />
        <span className="thread-provider">{thread.provider}</span>
        <span className="muted" data-testid="thread-state">
          {thread.state}
          {thread.model !== null ? ` · ${thread.model}` : ""}
        </span>
        {capabilities !== null && <ModeToggle client={props.client} thread={thread} capabilities={capabilities} />}
      </header>
      {gone !== undefined && <ThreadGone error={gone} />}
      {thread.olderTurns !== null && (
        <OlderTurns client={props.client} threadId={thread.threadId} older={thread.olderTurns} />
      )}
      <Timeline client={props.client} thread={thread} />
      {ended !== undefined && <ResumeBar client={props.client} threadId={thread.threadId} view={ended} />}
      {/* The checklist beside the composer: what the agent is doing, next to what you would say. */}
      <div className="thread-footer">
        {gone === undefined && <Composer client={props.client} thread={thread} />}
        {thread.latestPlan !== null && <Checklist latest={thread.latestPlan} history={extras.checklist} />}
      </div>
      <div ref={bottom} />
    </div>
  )
}

import { ThreadList as ThreadListStore, type PlanbridgeClient } from "@planbridge/client"
import { ThreadId, type OperatingMode, type ProviderInfo } from "@planbridge/contracts"
import { useCallback, useEffect, useMemo, useState } from "react"
import { useConnectionStatus, useStore } from "../hooks.ts"
import { notifyNewEntries } from "../notifications.ts"
import { onOpenFromNotification } from "../push.ts"
import { revealPrompt } from "../state/revealPrompt.ts"
import { ThreadExtrasStore } from "../state/threadExtras.ts"
import { promptFromUrl, showThreadInUrl, threadFromUrl } from "../state/threadUrl.ts"
import { showToast, toastError } from "../state/toasts.ts"
import { ConnectionBanner } from "./ConnectionBanner.tsx"
import { InboxPanel } from "./InboxPanel.tsx"
import { ProviderPicker } from "./ProviderPicker.tsx"
import { ThreadList } from "./ThreadList.tsx"
import { ThreadView } from "./ThreadView.tsx"
import { Toasts } from "./Toasts.tsx"

/** The connected screen: providers and threads on the left, the open thread, the inbox. */
export const Workspace = ({ client }: { readonly client: PlanbridgeClient }) => {
  const status = useConnectionStatus(client)
  const extras = useMemo(() => new ThreadExtrasStore(), [])
  const [openedAt] = useState(() => Date.now())
  // The thread list as the server pushes it (threads.subscribe): threads started anywhere appear.
  const [threadList, setThreadList] = useState<ThreadListStore>(() => new ThreadListStore())
  const entries = useStore(threadList)
  const threads = useMemo(() => entries.map((e) => e.thread), [entries])
  const [selected, select] = useState<ThreadId | undefined>(threadFromUrl)
  const setSelected = useCallback((threadId: ThreadId) => {
    showThreadInUrl(threadId)
    select(threadId)
  }, [])
  // The providers of the last welcome (kept while reconnecting): re-read whenever the status changes.
  const providers: ReadonlyArray<ProviderInfo> = useMemo(() => client.providers, [client, status])

  useEffect(
    () =>
      client.onEvent((threadId, event) => {
        extras.record(threadId, event)
        // A thread's history replays on follow; only what happens from now on pops up.
        if (Date.parse(event.createdAt) < openedAt - 2000) return
        if (event.type === "runtime.warning") showToast("warning", event.payload.message)
        if (event.type === "runtime.error") showToast("error", event.payload.message)
      }),
    [client, extras, openedAt]
  )
  useEffect(() => notifyNewEntries(client.inbox), [client])
  // A notification's deep link (`?thread=…&prompt=…`), or its click while this page is open.
  useEffect(() => {
    const linked = promptFromUrl()
    let stopRevealing = linked === undefined ? () => undefined : revealPrompt(linked)
    const stopListening = onOpenFromNotification(({ threadId, promptId }) => {
      stopRevealing()
      let id: ThreadId
      try {
        id = ThreadId.make(threadId)
      } catch {
        return
      }
      showThreadInUrl(id, promptId)
      select(id)
      stopRevealing = revealPrompt(promptId)
    })
    return () => {
      stopRevealing()
      stopListening()
    }
  }, [])
  // A followed thread that could not be caught up after a reconnect (e.g. gone from the server).
  useEffect(() => client.onThreadError((threadId, error) => toastError(`thread ${threadId}`, error)), [client])

  useEffect(() => {
    let mounted = true
    // Kept across reconnects by the client; its pending prompts fill the inbox.
    client.followThreadList().then(
      (list) => mounted && setThreadList(list),
      (e: unknown) => toastError("threads.subscribe", e)
    )
    return () => {
      mounted = false
    }
  }, [client])

  const start = async (provider: ProviderInfo, cwd: string, mode: OperatingMode) => {
    try {
      const { threadId } = await client.startSession(provider.provider, cwd, mode)
      await client.follow(threadId, { fromStart: true })
      setSelected(threadId)
    } catch (e) {
      toastError("session.start", e)
    }
  }

  return (
    <div className="workspace">
      <header className="topbar">
        <h1>Planbridge</h1>
        <ConnectionBanner status={status} />
      </header>
      <aside className="sidebar">
        <ProviderPicker providers={providers} onStart={start} />
        <ThreadList client={client} threads={threads} selected={selected} onSelect={setSelected} />
      </aside>
      <main className="main">
        {selected === undefined ? (
          <p className="hint">Pick a provider to start a session, or open a thread.</p>
        ) : (
          <ThreadView key={selected} client={client} threadId={selected} extras={extras.of(selected)} />
        )}
      </main>
      <InboxPanel client={client} onOpen={setSelected} />
      <Toasts />
    </div>
  )
}

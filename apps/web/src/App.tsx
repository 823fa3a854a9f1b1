import { PlanbridgeClient } from "@planbridge/client"
import { useEffect, useState } from "react"
import { TokenScreen } from "./components/TokenScreen.tsx"
import { Workspace } from "./components/Workspace.tsx"
import { clientId } from "./clientId.ts"
import { forgetToken, storeToken } from "./token.ts"

/** Connects with the token from the fragment (or typed in), then shows the workspace. */
export const App = ({ initialToken }: { readonly initialToken: string | undefined }) => {
  const [token, setToken] = useState(initialToken)
  const [client, setClient] = useState<PlanbridgeClient | undefined>(undefined)
  const [error, setError] = useState<string | undefined>(undefined)

  useEffect(() => {
    if (token === undefined) return
    let live = true
    let connected: PlanbridgeClient | undefined
    PlanbridgeClient.connect({ url: window.location.origin, token, clientName: "planbridge-web", clientId }).then(
      (c) => {
        connected = c
        if (live) setClient(c)
        else c.close()
      },
      (e: { code?: string; message?: string }) => {
        if (!live) return
        if (e.code === "unauthorized") forgetToken()
        setError(`${e.code ?? "error"}: ${e.message ?? String(e)}`)
        setToken(undefined)
      }
    )
    return () => {
      live = false
      connected?.close()
    }
  }, [token])

  if (token === undefined)
    return (
      <TokenScreen
        error={error}
        onToken={(t) => {
          storeToken(t)
          setError(undefined)
          setToken(t)
        }}
      />
    )
  if (client === undefined) return <p className="connecting">Connecting…</p>
  return <Workspace client={client} />
}

import { useState } from "react"

/** Without a token: how to get one, and a field to paste it (kept in this tab only). */
export const TokenScreen = (props: { readonly error: string | undefined; readonly onToken: (t: string) => void }) => {
  const [value, setValue] = useState("")
  return (
    <main className="token-screen">
      <h1>Planbridge</h1>
      <p>
        Open the address that <code>planbridge serve</code> prints (or run <code>planbridge open</code>): it carries the
        access token after <code>#token=</code>. Or paste the token (<code>planbridge token</code>):
      </p>
      {props.error !== undefined && <p className="error">{props.error}</p>}
      <form
        onSubmit={(e) => {
          e.preventDefault()
          if (value.trim() !== "") props.onToken(value.trim())
        }}
      >
        <input
          type="password"
          autoComplete="off"
          aria-label="Access token"
          value={value}
          onChange={(e) => setValue(e.target.value)}
        />
        <button type="submit">Connect</button>
      </form>
    </main>
  )
}

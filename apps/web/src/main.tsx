import { createRoot } from "react-dom/client"
import { App } from "./App.tsx"
import { registerServiceWorker } from "./push.ts"
import { takeToken } from "./token.ts"
import "./styles.css"

const root = document.getElementById("root")
if (root === null) throw new Error("index.html has no #root")
registerServiceWorker()
createRoot(root).render(<App initialToken={takeToken()} />)

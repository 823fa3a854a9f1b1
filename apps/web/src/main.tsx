import { createRoot } from "react-dom/client"
import { App } from "./App.tsx"
import { takeToken } from "./token.ts"
import "./styles.css"

const root = document.getElementById("root")
if (root === null) throw new Error("index.html has no #root")
createRoot(root).render(<App initialToken={takeToken()} />)

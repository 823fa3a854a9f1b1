// Each concern's CLI module registers itself; importing it here is what makes it available.
import "./rebuild.ts"

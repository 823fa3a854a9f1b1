// Each concern's CLI module registers itself; importing it here is what makes it available.
import "./serve.ts"
import "./token.ts"
import "./prompts.ts"
import "./schema.ts"
import "./rebuild.ts"
import "./replay.ts"

import { UserInputPrompt } from "@planbridge/contracts"
import { Schema } from "effect"

const decode = Schema.decodeUnknownSync(UserInputPrompt)

/** A prompt as stored in the `prompts.prompt` column. */
export const decodePromptJson = (json: string): UserInputPrompt => decode(JSON.parse(json))

// The scripted model servers are product code (demo mode, `planbridge serve --demo`); tests reuse them.
export * from "../../src/demo/mockResponsesModel.ts"

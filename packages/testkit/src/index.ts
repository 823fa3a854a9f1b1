/**
 * @planbridge/testkit: test a frontend against recorded Planbridge sessions — a `planbridge
 * serve --replay DIR` server on a free port, and a followed session with waits and answers.
 */
export { startReplayServer, type ReplayServer, type ReplayServerOptions } from "./ReplayServer.ts"
export { DEFAULT_WAIT_MS, startRecordedSession, type RecordedThread } from "./RecordedThread.ts"
export { connectReplay } from "./connectReplay.ts"
export { descendantsOf, programsStartedBy } from "./processTree.ts"

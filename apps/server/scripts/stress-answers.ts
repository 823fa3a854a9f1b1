import { parseArgs } from "node:util"
import { assertLoopbackOnly } from "../test/support/loopbackOnly.ts"
import {
  runAnswerIntegrity,
  startIntegrityRig,
  type IntegrityReport,
  type Scenario
} from "../test/provider/claude/answerIntegrity.ts"

/**
 * `npm run stress`: the Claude answer-integrity check with many iterations (default 200 per
 * scenario) against the real Agent SDK behind a real server, inside the loopback namespace.
 * Prints, per scenario, iterations, prompts, mismatches and self-cancellations; exits 1 on any
 * mismatch, self-cancellation or refused answer.
 */
const { values } = parseArgs({ options: { iterations: { type: "string", default: "200" } } })
const iterations = Number(values.iterations)
if (!Number.isInteger(iterations) || iterations < 1) {
  console.error(`--iterations must be a positive whole number, not ${values.iterations}`)
  process.exit(2)
}
assertLoopbackOnly()

const rig = await startIntegrityRig()
const reports: Array<[Scenario, IntegrityReport, number]> = []
try {
  for (const scenario of ["four-questions", "two-tool-uses"] as const) {
    const started = Date.now()
    const report = await runAnswerIntegrity(rig, scenario, iterations, (done) => {
      if (done % 50 === 0) console.error(`${scenario}: ${done}/${iterations}`)
    })
    reports.push([scenario, report, Date.now() - started])
  }
} finally {
  await rig.close()
}
let failed = false
for (const [scenario, r, ms] of reports) {
  console.log(
    `${scenario}: ${r.iterations} iterations, ${r.prompts} prompts, ${r.answered} answered, ` +
      `${r.mismatches.length} mismatches, ${r.selfCancellations} self-cancellations, ${r.refusedAnswers} refused answers ` +
      `(${(ms / r.iterations).toFixed(0)} ms per turn)`
  )
  for (const m of r.mismatches.slice(0, 5)) console.log(`  ${m}`)
  failed ||= r.mismatches.length > 0 || r.selfCancellations > 0 || r.refusedAnswers > 0
}
process.exit(failed ? 1 : 0)

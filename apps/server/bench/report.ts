/**
 * One line per figure: what was measured, the limit measured in the same run (if any), the
 * goal, the ratio the goal is about, and whether the goal is met. The lead compares ratios
 * within one run: the absolute figures of a shared machine are only indicative.
 */
export interface Figure {
  readonly name: string
  readonly value: string
  /** The bare baseline measured in the same run, when there is one. */
  readonly limit?: string
  readonly goal: string
  /** The ratio the goal is stated on (higher is better), and the least it may be. */
  readonly ratio: number
  readonly atLeast: number
}

const misses: Array<string> = []

export const report = (figure: Figure): void => {
  const met = figure.ratio >= figure.atLeast
  if (!met) misses.push(figure.name)
  console.log(
    `${figure.name}: ${figure.value}` +
      (figure.limit === undefined ? "" : `; limit ${figure.limit}`) +
      `; goal ${figure.goal}; ratio ${figure.ratio.toFixed(3)} (needs ≥ ${figure.atLeast.toFixed(3)})` +
      (met ? "" : "  ← MISSES ITS GOAL")
  )
}

/** A figure measured against an absolute bound: ratio = bound / value (≥ 1 meets it). */
export const reportAtMost = (name: string, value: number, bound: number, unit: string, digits = 1): void =>
  report({
    name,
    value: `${value.toFixed(digits)} ${unit}`,
    goal: `≤ ${bound} ${unit}`,
    ratio: bound / value,
    atLeast: 1
  })

/** A line of information that has no goal of its own. */
export const note = (text: string): void => console.log(`  ${text}`)

/** The closing line: which figures missed their goals. */
export const summary = (): void =>
  console.log(
    misses.length === 0 ? "every figure meets its goal" : `figures that miss their goals: ${misses.join(", ")}`
  )

/**
 * The action kind of a step (search / call / answer / other): the key of the step-level advantage pools, so a
 * step is compared only with steps that did the same kind of thing. Pure; reads only the parsed turn.
 */
import type { Step } from "../domain/Trajectory.ts"

/** What a step did: answered; else called tools; else searched; else nothing scoreable (malformed or plan-only). */
export type StepKind = "search" | "call" | "answer" | "other"

/** The kinds in pool-key order: `stepKinds[stepPoolKey(k)] === k`. */
export const stepKinds: ReadonlyArray<StepKind> = ["search", "call", "answer", "other"]

/** The kind of a step: `answer` if its turn answers; else `call` if it has calls; else `search` if it has searches; else `other`. */
export const stepKind = (step: Pick<Step, "turn">): StepKind => {
  const turn = step.turn
  if (turn === undefined) return "other"
  if (turn.answer !== undefined) return "answer"
  if (turn.calls.length > 0) return "call"
  if (turn.searches.length > 0) return "search"
  return "other"
}

/** The step-pool key of a kind (the advantage's `RolloutRewards.stepPool`): search 0, call 1, answer 2, other 3. */
export const stepPoolKey = (kind: StepKind): number => {
  switch (kind) {
    case "search":
      return 0
    case "call":
      return 1
    case "answer":
      return 2
    case "other":
      return 3
  }
}

/**
 * The step-pool keys of one rollout's steps, in order: each step's kind ({@link stepPoolKey}), except a malformed turn
 * (one that did not parse) **[ours]**, which takes the pool of the turn it failed to be: the kind of the nearest parsed
 * step after it in the rollout (its retry), else of the nearest before it, else `other`. Its R_step is 0 (r_base 0,
 * r_plan 0), so among the well-formed turns of that kind it gets a negative A_step; in a pool of its own (`other`, where
 * a group's only malformed turn used to land alone) it got exactly 0 while inheriting its phase's advantage.
 */
export const stepPools = (steps: ReadonlyArray<Pick<Step, "turn">>): ReadonlyArray<number> => {
  const keys = steps.map((s) => (s.turn === undefined ? -1 : stepPoolKey(stepKind(s))))
  // one pass from the end fills each malformed step with the next parsed step's key; a second from the start, with the previous
  let next = -1
  const after = keys.map(() => -1)
  for (let i = keys.length - 1; i >= 0; i--) {
    after[i] = next
    if ((keys[i] as number) >= 0) next = keys[i] as number
  }
  let previous = -1
  return keys.map((k, i) => {
    if (k >= 0) {
      previous = k
      return k
    }
    const retry = after[i] as number
    return retry >= 0 ? retry : previous >= 0 ? previous : stepPoolKey("other")
  })
}

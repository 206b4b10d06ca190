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

/** The step-pool keys of a list of steps, in order. */
export const stepPools = (steps: ReadonlyArray<Pick<Step, "turn">>): ReadonlyArray<number> => steps.map((s) => stepPoolKey(stepKind(s)))

/**
 * Scoring a group of rollouts end to end: judge each trajectory, compute its step / phase / answer rewards,
 * then the group's advantages, and store all of it on the trajectories.
 */
import { Effect, Option, Schema } from "effect"
import type { Task } from "../domain/Task.ts"
import type { Trajectory } from "../domain/Trajectory.ts"
import * as StudentOracle from "../agent/StudentOracle.ts"
import * as Telemetry from "../io/Telemetry.ts"
import { Judge } from "../judge/Judge.ts"
import * as RuleJudge from "../judge/RuleJudge.ts"
import * as Advantage from "../math/Advantage.ts"
import * as Credit from "../math/Credit.ts"
import * as Facts from "../math/TrajectoryFacts.ts"
import * as Reward from "../math/Reward.ts"
import * as Equivalence from "../toolenv/Equivalence.ts"
import { ToolLibrary } from "../toolenv/ToolLibrary.ts"
import { GeneratedWorld } from "../toolenv/world/World.ts"
import * as Estimators from "./Estimators.ts"

/** Scoring could not run as configured (unknown estimator, a group that cannot be normalised). */
export class ScoringError extends Schema.TaggedError<ScoringError>()("ScoringError", {
  message: Schema.String
}) {}

/** How a group is scored. */
export interface ScoringOptions {
  readonly reward: Reward.RewardConfig
  /** Advantage estimator name, from the registry in the context ({@link Estimators.Estimators}; default `paraagent`). */
  readonly estimator: string
}

/**
 * Which tools can stand in for a gold tool in this environment, by name: the generated world's equivalent providers
 * (`StudentOracle.worldEquivalence`: the same operation on the same entity type, with compatible parameters — the
 * rule of the ceiling and of DAgger's labels) when the context holds the world, else the exact tool only.
 */
export const equivalence: Effect.Effect<Equivalence.Equivalent> = Effect.map(
  Effect.serviceOption(GeneratedWorld),
  Option.match({
    onNone: () => Equivalence.exact,
    onSome: (world): Equivalence.Equivalent => {
      const oracle = StudentOracle.worldEquivalence(world.ops)
      return (gold, tool) => {
        if (gold === tool) return true
        const a = world.library.get(gold)
        const b = world.library.get(tool)
        return a !== undefined && b !== undefined && oracle(a, b) !== undefined
      }
    }
  })
)

/** The gold needs of a task as the credit terms read them: one per gold call, with the environment's equivalence. */
export const needsOf = (task: Task, equivalent: Equivalence.Equivalent): Credit.GoldNeeds => ({ tools: task.gold.map((g) => g.tool as string), equivalent })

/** The paper's coefficients and the decoupled estimator. */
export const defaultOptions: ScoringOptions = { reward: Reward.defaultRewardConfig, estimator: Advantage.defaultEstimator }

/**
 * The rewards of one judged trajectory of a task: the paper's step / phase / answer rewards, then the credit terms
 * of src/math/Credit.ts (coverage of the task's gold calls, the answer step from the judge's counts, the rewards of
 * single actions). Pure; what {@link scoreGroup}, the server's `/score` and the MCP episodes all use.
 */
export const rewardsOf = (
  task: Task,
  judged: Trajectory,
  context: { readonly deps: Facts.DepLookup; readonly equivalent: Equivalence.Equivalent; readonly reward: Reward.RewardConfig }
): Reward.TrajectoryScore =>
  Credit.apply(
    Reward.score(Facts.fromTrajectory(judged, { deps: context.deps }), context.reward),
    judged.steps,
    Credit.progressOf(judged.steps, needsOf(task, context.equivalent)),
    judged.verdict?.counts,
    context.reward,
    Credit.kindRewards(judged.steps, RuleJudge.evidenceBefore(RuleJudge.usableFacts(task), judged), judged.stop === "max_rounds", context.reward.credit.earlyAnswer)
  )

/** How many trajectories carry no verdict: after {@link scoreGroup}, the ones the judge failed on. */
export const unjudgedCount = (trajectories: ReadonlyArray<Trajectory>): number => {
  let n = 0
  for (const t of trajectories) if (t.verdict === undefined) n++
  return n
}

/**
 * Judges, rewards and computes advantages for the G rollouts of one task. A judge failure leaves that trajectory
 * unjudged (no `verdict`) and is logged; it never drops the trajectory. By default (`answer.unjudged: "mask"`) an
 * unjudged trajectory is left out of the group's advantages at every level and gets 0 (the others are scored as
 * if it were not in the group); with `{ penalty }` its R_ans is the penalty. Count them with {@link unjudgedCount}.
 */
export const scoreGroup = Effect.fn("Scoring.scoreGroup")(function*(
  task: Task,
  trajectories: ReadonlyArray<Trajectory>,
  options: ScoringOptions = defaultOptions
) {
  const judge = yield* Judge
  const library = yield* ToolLibrary
  const spans = yield* Telemetry.exporting
  const judged = yield* Effect.forEach(trajectories, (t) =>
    Telemetry.span(
      spans,
      "Judge.judge",
      { "judge.name": judge.name, "task.id": task.id, "trajectory.id": t.id, "rollout.paradigm": t.paradigm },
      judge.judge(task, t).pipe(
        Effect.map((verdict): Trajectory => ({ ...t, verdict })),
        Effect.catchTag("JudgeError", (e) => Effect.as(Effect.logWarning(`judge failed on ${t.id}: ${e.message}`), t))
      ),
      verdictAttributes
    ), { concurrency: 4 })
  const deps = (from: string, to: string) => library.graph.kind(from, to)
  const equivalent = yield* equivalence
  const scores = judged.map((t) => rewardsOf(task, t, { deps, equivalent, reward: options.reward }))
  const rewarded = judged.map((t, i) => Reward.attach(t, scores[i] as Reward.TrajectoryScore))
  const unjudged = unjudgedCount(judged)
  if (unjudged > 0) {
    const policy = options.reward.answer.unjudged === "mask" ? "masked from the advantages" : `R_ans = ${options.reward.answer.unjudged.penalty}`
    yield* Effect.logWarning(`${unjudged} of ${judged.length} trajectories of task ${task.id} unjudged: ${policy}`)
  }
  const rollouts = scores.map((s, i) => Advantage.fromScore(s, (judged[i] as Trajectory).steps))
  const advantages = Advantage.compute(options.estimator, rollouts, options.reward.advantage, yield* Estimators.current)
  if (advantages._tag === "UnknownEstimator") {
    return yield* new ScoringError({ message: `unknown advantage estimator ${JSON.stringify(options.estimator)}; known: ${advantages.known.join(", ")}` })
  }
  if (advantages._tag === "InvalidGroup") {
    return yield* new ScoringError({ message: `group of task ${task.id} cannot be normalised: ${advantages.message}` })
  }
  const scored = rewarded.map((t, i) => Advantage.attach(t, advantages.advantages[i] ?? []))
  if (spans) {
    yield* Effect.annotateCurrentSpan({
      "task.id": task.id,
      "group.size": scored.length,
      "scoring.estimator": options.estimator,
      "scoring.unjudged": unjudged,
      "reward.answer_mean": scores.reduce((s, x) => s + x.answer.rAns, 0) / Math.max(1, scores.length)
    })
  }
  return scored
})

/** The judge's verdict as span attributes (or that it gave none). */
const verdictAttributes = (t: Trajectory): Telemetry.Attributes =>
  t.verdict === undefined
    ? { "judge.outcome": "unjudged" }
    : { "judge.outcome": "judged", "verdict.quality": t.verdict.quality, "verdict.faithfulness": t.verdict.faithfulness, "verdict.utility": t.verdict.utility }

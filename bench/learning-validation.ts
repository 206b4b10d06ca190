/**
 * The learning pipeline measured on the **validation** split — where its settings are chosen, never on the test
 * split: the teacher's demonstrations on training tasks, SFT from the seeded Backbone, RL from that checkpoint with
 * each estimator (the pipeline's budget unless overridden) and the zero-advantage control (KL + entropy only), and
 * every model evaluated on held-out validation tasks (providers of the validation split): greedy decoding with
 * `--rollouts` environment seeds per task (the pipeline's protocol) and sampled decoding beside it. Prints per seed and
 * model Pass@1 (greedy, sampled), Path, Path≈, rounds, where the failures fall and, for RL, the groups trained and
 * skipped; then the paired differences over (seed, task) with bootstrap 95% intervals. Also the teacher-forced
 * exact-turn accuracy (greedy turn = the label) on the training demonstrations and on the teacher's demonstrations of
 * the validation tasks, after SFT and after DAgger (`--dagger` rounds; RL starts from the DAgger checkpoint), and the
 * NLL per decision (kind, each kind's candidates, plan bit) on the validation demonstrations. `--scorer set` trains the
 * learned set encoder instead of the fixed summaries, `--label set` has DAgger clone the oracle's acceptable sets.
 * Run: `npx tsx bench/learning-validation.ts [--seeds 1,2] [--tasks 90] [--estimators grpo,paraagent_credit,zero]
 * [--rollouts 2] [--rl-iterations 8] [--rl-tasks 16] [--group 4] [--rl-temperature 0.5] [--rl-answer sampled|decoded] [--dynamic outcome|signal|off] [--rounds 1]
 * [--credit action|turn] [--entropy normalised|sum] [--entropy-coef 0.005] [--phase-coverage 0.5] [--step-coverage 0.5]
 * [--action-coverage 0.5] [--answer-step 1] [--early-answer 0] [--lambda-phase 0.5] [--lambda-step 0.25] [--dagger 3] [--dagger-epochs 4] [--rl true] [--scorer mlp|set] [--label exact|set|matched] [--search-labels cover|every] [--listwise 0]
 * [--outcomes <file>] [--first-query request|documentation] [--answer-threshold 0.15] [--search-threshold 0.5] [--call-threshold 0.5] [--forced-answers kind|first]
 * [--truncation score|cap:<x>] [--stop 0.3] [--stop-at 0.3,0.5] [--answer-records] [--records-variant] [--skip-repeats] [--repeats-variant] [--every-clause] [--clauses-variant]
 * [--joint-kind 0] [--joint-kind-variant α] [--react] [--json]`. `--stop` is a greedy stop (answer once every clause
 * has a fact above it, `LearnedPolicy.stopAt`; negative, the default: none); `--stop-at` also evaluates DAgger and
 * each RL model at other stops, and `--react` under ReAct too, with ParaAct's rounds against ReAct's per level — the
 * same weights, so paired without training noise. `--answer-records` bounds each list's answer facts to the records
 * their clause asks about (`LearnedPolicy.keepAskedRecords`); `--records-variant` also evaluates DAgger and each RL
 * model with that bound the other way, the same weights; `--skip-repeats` and `--repeats-variant` do the same for the skip
 * of calls that repeat a successful operation (`LearnedPolicy.skipRepeats`), `--every-clause` and `--clauses-variant`
 * for a call turn that also opens every open clause (`LearnedPolicy.callEveryClause`); `--joint-kind α` weighs the search
 * and call kinds by their best candidates (`LearnedPolicy.jointKind`), and `--joint-kind-variant α` evaluates each model
 * at that α beside the default. `--truncation cap:-0.5` pays a rollout that T_max ended (stop `max_rounds`)
 * at most the worst verdict's R_ans during RL (docs/reward.md §6); evaluation verdicts are the judge's either way.
 */
import { Effect, Layer, Option, Ref } from "effect"
import * as fs from "node:fs"
import { Flag } from "effect/cli"
import * as BenchFlags from "./BenchFlags.ts"
import * as App from "../layers/App.ts"
import type { Task } from "../src/domain/Task.ts"
import type { Trajectory } from "../src/domain/Trajectory.ts"
import * as LearnedPolicy from "../src/agent/LearnedPolicy.ts"
import * as Teacher from "../src/agent/Teacher.ts"
import * as RunConfig from "../src/eval/RunConfig.ts"
import * as Scoring from "../src/eval/Scoring.ts"
import * as Evaluation from "../src/math/Evaluation.ts"
import { hashParts } from "../src/math/Random.ts"
import * as Reward from "../src/math/Reward.ts"
import * as Stats from "../src/math/Stats.ts"
import * as Rollout from "../src/runtime/Rollout.ts"
import { TaskSource } from "../src/toolenv/TaskSource.ts"
import { ToolLibrary } from "../src/toolenv/ToolLibrary.ts"
import * as Pipeline from "../src/training/Pipeline.ts"
import * as Trainer from "../src/training/Trainer.ts"
import * as Dagger from "../src/training/Dagger.ts"
import * as StudentOracle from "../src/agent/StudentOracle.ts"
import { GeneratedWorld } from "../src/toolenv/world/World.ts"

const weight = (name: string, description: string, fallback: number) =>
  Flag.Finite(name).pipe(Flag.withSchema(RunConfig.FiniteIn({ minimum: 0, maximum: 1 })), Flag.withDescription(description), Flag.withDefault(fallback))
const credit = Reward.defaultRewardConfig.credit

const flags = await BenchFlags.parse("learning-validation", "SFT and RL (each estimator, and the zero-advantage control) evaluated on the validation split", {
  seeds: Flag.String("seeds").pipe(Flag.withDescription("training seeds, comma-separated"), Flag.withDefault("1,2")),
  tasks: Flag.Int("tasks").pipe(Flag.withSchema(RunConfig.IntIn({ minimum: 3, maximum: 3000 })), Flag.withDescription("validation tasks (levels round-robin)"), Flag.withDefault(90)),
  estimators: Flag.String("estimators").pipe(Flag.withDescription("RL estimators to train, comma-separated (zero = the zero-advantage control)"), Flag.withDefault([...Pipeline.defaults.estimators, "zero"].join(","))),
  rollouts: Flag.Int("rollouts").pipe(Flag.withSchema(RunConfig.IntIn({ minimum: 1, maximum: 16 })), Flag.withDescription("greedy (and sampled) rollouts per validation task"), Flag.withDefault(Pipeline.defaults.evalRollouts)),
  rlIterations: Flag.Int("rl-iterations").pipe(Flag.withSchema(RunConfig.IntIn({ minimum: 1, maximum: 1000 })), Flag.withDescription("RL iterations"), Flag.withDefault(Pipeline.defaults.rlIterations)),
  rlTasks: Flag.Int("rl-tasks").pipe(Flag.withSchema(RunConfig.IntIn({ minimum: 1, maximum: 1000 })), Flag.withDescription("tasks per RL iteration"), Flag.withDefault(Pipeline.defaults.rlTasksPerIteration)),
  group: Flag.Int("group").pipe(Flag.withSchema(RunConfig.IntIn({ minimum: 1, maximum: 64 })), Flag.withDescription("rollouts per RL task (G)"), Flag.withDefault(Pipeline.defaults.group)),
  dynamic: Flag.Literals("dynamic", ["outcome", "signal", "off"]).pipe(Flag.withDescription("dynamic sampling: train only on groups whose outcomes differ (outcome) or that carry any advantage (signal)"), Flag.withDefault(Pipeline.defaults.dynamicSampling.filter)),
  rounds: Flag.Int("rounds").pipe(Flag.withSchema(RunConfig.IntIn({ minimum: 1, maximum: 8 })), Flag.withDescription("dynamic sampling: draws of tasks per iteration at most"), Flag.withDefault(Pipeline.defaults.dynamicSampling.rounds)),
  credit: Flag.Literals("credit", ["action", "turn"]).pipe(Flag.withDescription("per-factor credit, or one advantage on the whole turn"), Flag.withDefault(Pipeline.defaults.credit)),
  entropy: Flag.Literals("entropy", ["normalised", "sum"]).pipe(Flag.withDescription("the entropy bonus"), Flag.withDefault(Trainer.defaultRl.ppo.entropy ?? "sum")),
  entropyCoef: Flag.Finite("entropy-coef").pipe(Flag.withSchema(RunConfig.FiniteIn({ minimum: 0, maximum: 1 })), Flag.withDescription("entropy coefficient"), Flag.withDefault(Trainer.defaultRl.ppo.entropyCoef)),
  rlAnswer: Flag.Literals("rl-answer", ["sampled", "decoded"]).pipe(Flag.withDescription("RL's rollouts draw the answer's facts (sampled) or choose them as greedy evaluation does (decoded: only the kind is drawn)"), Flag.withDefault("sampled")),
  rlTemperature: Flag.Finite("rl-temperature").pipe(Flag.withSchema(RunConfig.FiniteIn({ minimum: 0.05, maximum: 5 })), Flag.withDescription("RL's sampling temperature: its rollouts draw from π(logits / T) and PPO trains that distribution"), Flag.withDefault(Pipeline.defaults.rlTemperature)),
  lr: Flag.Finite("lr").pipe(Flag.withSchema(RunConfig.FiniteIn({ minimum: 0, maximum: 1 })), Flag.withDescription("RL learning rate"), Flag.withDefault(Trainer.defaultRl.adam.lr)),
  phaseCoverage: weight("phase-coverage", "weight of the coverage term in R_phase", credit.phaseCoverage),
  stepCoverage: weight("step-coverage", "weight of the coverage term in R_step", credit.stepCoverage),
  actionCoverage: weight("action-coverage", "weight of the coverage term in a call's and a search's own reward", credit.actionCoverage),
  answerStep: weight("answer-step", "weight of the judge-count F1 in the answer step", credit.answerStep),
  earlyAnswer: weight("early-answer", "the kind reward of an answer given before the evidence was complete (1: unscored)", credit.earlyAnswer),
  lambdaPhase: weight("lambda-phase", "λp, the phase level's weight in a combined advantage (Eq. 7)", Reward.defaultRewardConfig.advantage.lambdaPhase),
  lambdaStep: weight("lambda-step", "λs, the step level's weight in a combined advantage (Eq. 7; an action's own z under per-action credit)", Reward.defaultRewardConfig.advantage.lambdaStep),
  dagger: Flag.Int("dagger").pipe(Flag.withSchema(RunConfig.IntIn({ minimum: 0, maximum: 20 })), Flag.withDescription("DAgger rounds after SFT (0: SFT on the teacher only)"), Flag.withDefault(Pipeline.defaults.daggerRounds)),
  daggerEpochs: Flag.Int("dagger-epochs").pipe(Flag.withSchema(RunConfig.IntIn({ minimum: 1, maximum: 64 })), Flag.withDescription("passes over DAgger's aggregate per round"), Flag.withDefault(Dagger.defaultDagger.epochs)),
  rl: Flag.Boolean("rl").pipe(Flag.withDescription("run RL after SFT (each estimator)"), Flag.withDefault(true)),
  firstQuery: Flag.Literals("first-query", ["request", "documentation"]).pipe(Flag.withDescription("how the teacher phrases a slot's first search"), Flag.withDefault(Pipeline.defaults.teacherFirstQuery)),
  sampled: Flag.Boolean("sampled").pipe(Flag.withDescription("also evaluate with sampled decoding (--sampled=false: greedy only)"), Flag.withDefault(true)),
  backbone: Flag.Boolean("backbone").pipe(Flag.withDescription("also evaluate the Backbone (--backbone=false: skip it)"), Flag.withDefault(true)),
  scorer: Flag.Literals("scorer", ["set", "mlp"]).pipe(Flag.withDescription("the scoring network: the learned set encoder, or the MLP over fixed mean/max summaries"), Flag.withDefault(LearnedPolicy.defaultScorer)),
  label: Flag.Literals("label", ["set", "exact", "matched"]).pipe(Flag.withDescription("what DAgger clones: the oracle's acceptable set of turns, its one pick, or its pick per need matched to the student's favourite"), Flag.withDefault(Dagger.defaultDagger.label)),
  listwise: Flag.Finite("listwise").pipe(Flag.withSchema(RunConfig.FiniteIn({ minimum: 0, maximum: 10 })), Flag.withDescription("DAgger's clones add this weight × the listwise term at every exact call label (Dagger.DaggerOptions.listwise)"), Flag.withDefault(Dagger.defaultDagger.listwise)),
  searchLabels: Flag.Literals("search-labels", ["cover", "every"]).pipe(Flag.withDescription("which searches DAgger's oracle labels take: a greedy cover, or every query that finds a needed tool"), Flag.withDefault(Dagger.defaultDagger.searchLabels)),
  evalSplit: Flag.Literals("eval-split", ["validation", "train"]).pipe(
    Flag.withDescription("where the models are evaluated: the validation split (its own providers), or fresh tasks of the training split that RL never drew (the training providers: does what RL learned hold on new tasks of the same tools?)"),
    Flag.withDefault("validation")
  ),
  answerThreshold: Flag.Finite("answer-threshold").pipe(Flag.withSchema(RunConfig.FiniteIn({ minimum: 0.01, maximum: 0.99 })), Flag.withDescription("greedy decoding states every answer fact above this probability (0.5: the most probable turn)"), Flag.withDefault(LearnedPolicy.evalAnswerThreshold)),
  searchThreshold: Flag.Finite("search-threshold").pipe(Flag.withSchema(RunConfig.FiniteIn({ minimum: 0.01, maximum: 0.99 })), Flag.withDescription("greedy decoding searches every query of a search turn above this probability (0.5: the most probable turn)"), Flag.withDefault(0.5)),
  callThreshold: Flag.Finite("call-threshold").pipe(Flag.withSchema(RunConfig.FiniteIn({ minimum: 0.01, maximum: 0.99 })), Flag.withDescription("greedy decoding makes every call of a call turn above this probability (0.5: the most probable turn)"), Flag.withDefault(0.5)),
  answerQuota: Flag.Finite("answer-quota").pipe(Flag.withSchema(RunConfig.FiniteIn({ minimum: -1, maximum: 0.99 })), Flag.withDescription("greedy decoding also fills each clause's quota of values (the items it counts times the attributes it names) with its most probable facts above this probability (negative: off)"), Flag.withDefault(LearnedPolicy.evalAnswerQuota)),
  answerCover: Flag.Finite("answer-cover").pipe(Flag.withSchema(RunConfig.FiniteIn({ minimum: -1, maximum: 0.99 })), Flag.withDescription("greedy decoding also states each uncovered clause's best fact above this probability (negative: off)"), Flag.withDefault(LearnedPolicy.evalAnswerCover)),
  forcedAnswers: Flag.Literals("forced-answers", ["kind", "first"]).pipe(Flag.withDescription("what DAgger's exact labels teach where the oracle has no gold fact to state: the kind only, or its placeholder first fact"), Flag.withDefault(Dagger.defaultDagger.forcedAnswers)),
  truncation: Flag.String("truncation").pipe(
    Flag.withDescription("R_ans of a rollout T_max ended (stop max_rounds) in RL: score (its forced answer's verdict, Table 9 as written) or cap:<x> (at most x; cap:-0.5 = the worst verdict's)"),
    Flag.withDefault(Reward.showTruncation(Reward.defaultRewardConfig.answer.truncation))
  ),
  stop: Flag.Finite("stop").pipe(Flag.withSchema(RunConfig.FiniteIn({ minimum: -1, maximum: 0.99 })), Flag.withDescription("greedy decoding answers once every clause has a fact above this probability (negative: no stop)"), Flag.withDefault(-1)),
  stopAt: Flag.String("stop-at").pipe(Flag.withDescription("also evaluate DAgger and each RL model with greedy decoding's stop at these floors (answer once every clause has a fact above the floor; LearnedPolicy.readyToAnswer), comma-separated"), Flag.withDefault("")),
  answerRecords: Flag.Boolean("answer-records").pipe(Flag.withDescription("greedy decoding keeps each list's facts to the records their clause asks about (LearnedPolicy.keepAskedRecords)"), Flag.withDefault(LearnedPolicy.evalAnswerRecords)),
  skipRepeats: Flag.Boolean("skip-repeats").pipe(Flag.withDescription("greedy decoding never repeats an operation a successful call already did (LearnedPolicy.skipRepeats)"), Flag.withDefault(LearnedPolicy.evalSkipRepeats)),
  repeatsVariant: Flag.Boolean("repeats-variant").pipe(Flag.withDescription("also evaluate DAgger and each RL model with greedy decoding's skip of repeated operations (LearnedPolicy.skipRepeats) turned the other way from --skip-repeats, the same weights"), Flag.withDefault(false)),
  jointKind: Flag.Finite("joint-kind").pipe(Flag.withSchema(RunConfig.FiniteIn({ minimum: 0, maximum: 10 })), Flag.withDescription("greedy decoding chooses the search or call kind by log P(kind) + α · log P(its best candidate) (LearnedPolicy.jointKind; 0: the kind row alone)"), Flag.withDefault(LearnedPolicy.evalJointKind)),
  jointKindVariant: Flag.Finite("joint-kind-variant").pipe(Flag.withSchema(RunConfig.FiniteIn({ minimum: 0, maximum: 10 })), Flag.withDescription("also evaluate DAgger and each RL model with --joint-kind at this α, the same weights (0: no variant)"), Flag.withDefault(0)),
  everyClause: Flag.Boolean("every-clause").pipe(Flag.withDescription("a greedy call turn also makes each open clause's most probable call that would open it (LearnedPolicy.callEveryClause)"), Flag.withDefault(LearnedPolicy.evalEveryClause)),
  clausesVariant: Flag.Boolean("clauses-variant").pipe(Flag.withDescription("also evaluate DAgger and each RL model with --every-clause turned the other way, the same weights"), Flag.withDefault(false)),
  recordsVariant: Flag.Boolean("records-variant").pipe(Flag.withDescription("also evaluate DAgger and each RL model with greedy decoding's record bound (LearnedPolicy.keepAskedRecords) turned the other way from --answer-records, the same weights"), Flag.withDefault(false)),
  react: Flag.Boolean("react").pipe(Flag.withDescription("also evaluate DAgger and each RL model under ReAct (one action a round), with each --stop-at floor too: ParaAct's rounds against ReAct's per level"), Flag.withDefault(false)),
  json: Flag.Boolean("json").pipe(Flag.withDescription("also print one JSON line with every number"), Flag.withDefault(false)),
  outcomes: Flag.String("outcomes").pipe(Flag.withDescription("also write each model's (SFT, DAgger, every RL estimator) per-task greedy success rates (JSON: task ids, then per seed and model one entry per task) to this file, for bench/paired-outcomes.ts"), Flag.optional)
})
const seeds = (RunConfig.commaItems(flags.seeds) ?? [""]).map((s) => (/^\d+$/.test(s) ? Number(s) : Number.NaN))
if (!seeds.every((s) => Number.isInteger(s) && s >= 0)) {
  console.error(`bench/learning-validation: --seeds ${flags.seeds}: expected non-negative integers, comma-separated`)
  process.exit(1)
}
const stopFloors = (RunConfig.commaItems(flags.stopAt) ?? []).map(Number)
if (!stopFloors.every((f) => Number.isFinite(f) && f > 0 && f < 1)) {
  console.error(`bench/learning-validation: --stop-at ${flags.stopAt}: expected probabilities in (0, 1), comma-separated`)
  process.exit(1)
}
const estimators = flags.estimators.split(",").map((s) => s.trim()).filter((s) => s !== "")

const truncation = Reward.parseTruncation(flags.truncation)
if (truncation === undefined) {
  console.error(`bench/learning-validation: --truncation ${flags.truncation}: expected score or cap:<number> (e.g. cap:-0.5)`)
  process.exit(1)
}

const options = Pipeline.defaults
const reward: Reward.RewardConfig = {
  ...Reward.defaultRewardConfig,
  answer: { ...Reward.defaultRewardConfig.answer, truncation },
  advantage: { ...Reward.defaultRewardConfig.advantage, lambdaPhase: flags.lambdaPhase, lambdaStep: flags.lambdaStep },
  credit: { phaseCoverage: flags.phaseCoverage, stepCoverage: flags.stepCoverage, actionCoverage: flags.actionCoverage, answerStep: flags.answerStep, earlyAnswer: flags.earlyAnswer }
}
const cell = Ref.makeUnsafe(LearnedPolicy.initial(seeds[0] ?? 1, flags.scorer))
const app = App.layer({ tasks: { holdoutTools: true }, policy: { kind: "learned", weights: cell } })

/** One model's evaluation: per task its greedy success rate (the paired comparison's input), and the lines to print. */
interface Evaluated {
  readonly successes: ReadonlyArray<number>
  readonly pass1: number
  readonly sampled: number
  readonly rounds: number
  readonly line: string
}

/** What the groups of an RL run were: trained (outcomes differed) and skipped. */
const skippedOf = (report: Trainer.RlReport) => {
  const groups = report.metrics.reduce((n, m) => n + m.groups, 0)
  const skipped = report.metrics.reduce((n, m) => n + m.groupsSkipped, 0)
  return { groups, skipped }
}

const program = Effect.gen(function*() {
  const source = yield* TaskSource
  const library = yield* ToolLibrary
  const equivalent = yield* Scoring.equivalence
  const trainTasks = yield* source.sample({ split: "train", count: options.trainTasks, levels: options.levels, seed: options.taskSeed })
  const validation = flags.evalSplit === "validation"
    ? yield* source.sample({ split: "validation", count: flags.tasks, levels: options.levels, seed: options.taskSeed })
    : yield* Effect.map(
      source.sample({ split: "train", count: flags.tasks + trainTasks.length, levels: options.levels, seed: options.taskSeed + 1000 }),
      (drawn) => {
        const pool = new Set(trainTasks.map((t) => t.id as string))
        return drawn.filter((t) => !pool.has(t.id)).slice(0, flags.tasks)
      }
    )
  const teacher = yield* Rollout.make({}).pipe(
    Effect.provide(Layer.merge(Layer.succeed(ToolLibrary, library), Teacher.layer({ mistakeRate: options.teacherMistakeRate, firstQuery: flags.firstQuery })))
  )
  // the app's other services stay in the context: only the policy differs
  const greedyOptions: LearnedPolicy.LearnedPolicyOptions = { decoding: "greedy", answerThreshold: flags.answerThreshold, searchThreshold: flags.searchThreshold, callThreshold: flags.callThreshold, answerCover: flags.answerCover < 0 ? undefined : flags.answerCover, answerQuota: flags.answerQuota < 0 ? undefined : flags.answerQuota, stopAt: flags.stop <= 0 ? undefined : flags.stop, answerRecords: flags.answerRecords, skipRepeats: flags.skipRepeats, everyClause: flags.everyClause, jointKind: flags.jointKind }
  const greedy = yield* Rollout.make({}).pipe(Effect.provide(LearnedPolicy.layer(cell, greedyOptions)))
  const stopRollouts = yield* Effect.forEach(stopFloors, (floor) => Effect.map(Rollout.make({}).pipe(Effect.provide(LearnedPolicy.layer(cell, { ...greedyOptions, stopAt: floor }))), (rollout) => ({ floor, rollout })))
  // the decodings evaluated both ways under the same weights: each requested one turned from its flag's setting
  const toggles = [
    { on: flags.recordsVariant, suffix: `records ${flags.answerRecords ? "off" : "on"}`, options: { answerRecords: !flags.answerRecords } },
    { on: flags.clausesVariant, suffix: `every clause ${flags.everyClause ? "off" : "on"}`, options: { everyClause: !flags.everyClause } },
    { on: flags.repeatsVariant, suffix: `repeats ${flags.skipRepeats ? "kept" : "skipped"}`, options: { skipRepeats: !flags.skipRepeats } },
    { on: flags.jointKindVariant > 0, suffix: `joint kind ${flags.jointKindVariant}`, options: { jointKind: flags.jointKindVariant } }
  ]
  const toggleRollouts = yield* Effect.forEach(toggles.filter((t) => t.on), (t) =>
    Effect.map(Rollout.make({}).pipe(Effect.provide(LearnedPolicy.layer(cell, { ...greedyOptions, ...t.options }))), (rollout) => ({ suffix: t.suffix, rollout })))
  const sampling = yield* Rollout.Rollout
  const scoring: Scoring.ScoringOptions = { reward, estimator: "grpo" }
  /** Every task rolled out `size` times (environment seeds from the salt, as the pipeline's evaluation), scored. */
  const scored = (rollout: Rollout.RolloutService, tasks: ReadonlyArray<Task>, salt: string, size: number, paradigm: Trajectory["paradigm"] = "ParaAct") =>
    Effect.forEach(tasks, (task) =>
      Effect.flatMap(rollout.runGroup(task, { paradigm, seed: hashParts(0, salt, task.id) & 0x3fffffff, size }), (g) => Scoring.scoreGroup(task, g, scoring)), { concurrency: 8 })
  const demos = (yield* scored(teacher, trainTasks, "demo", 1)).map((g) => g[0] as Trajectory)
  const validationDemos = (yield* scored(teacher, validation, "val-demo", 1)).map((g) => g[0] as Trajectory)
  const maxRounds = Rollout.defaultConfig.maxRounds
  const world = yield* GeneratedWorld
  const oracleEquivalent = StudentOracle.worldEquivalence(world.ops)
  const kept = (ts: ReadonlyArray<Trajectory>, tasks: ReadonlyArray<Task>) =>
    Dagger.projectedDemonstrations(ts.flatMap((trajectory, i) => (Trainer.keeps("pass", trajectory) ? [{ task: tasks[i] as Task, trajectory }] : [])), maxRounds, (n) => library.get(n))
  const trainStates = kept(demos, trainTasks)
  const validationStates = kept(validationDemos, validation)
  const accuracy = (w: LearnedPolicy.Weights) =>
    `teacher-forced exact-turn accuracy: training ${(100 * Dagger.exactTurnAccuracy(w.params, trainStates)).toFixed(1)}% of ${trainStates.length}, validation ${(100 * Dagger.exactTurnAccuracy(w.params, validationStates)).toFixed(1)}% of ${validationStates.length}`
  /** Mean NLL per decision on the teacher's projected validation states: the turn, the kind, each kind's candidates given the kind, the plan bit. */
  const factors = (w: LearnedPolicy.Weights) => {
    const f = Dagger.factorNll(w.params, validationStates)
    const per = (n: number, nll: number) => (n === 0 ? "-" : (nll / n).toFixed(3))
    return `validation NLL per decision: turn ${per(f.states, f.turn)}, kind ${per(f.states, f.kind)}, ` +
      `search ${per(f.candidates.search.n, f.candidates.search.nll)} (${f.candidates.search.n}), call ${per(f.candidates.call.n, f.candidates.call.nll)} (${f.candidates.call.n}), ` +
      `answer ${per(f.candidates.answer.n, f.candidates.answer.nll)} (${f.candidates.answer.n}), plan ${per(f.plan.n, f.plan.nll)} (${f.plan.n})`
  }
  const teacherPass = demos.filter((t, i) => Evaluation.outcomeOf(trainTasks[i] as Task, t).success).length
  console.log(`${trainTasks.length} training tasks, ${validation.length} ${flags.evalSplit === "validation" ? "validation" : "fresh training-split"} tasks × ${flags.rollouts} rollouts; teacher first queries from the ${flags.firstQuery}; scorer ${flags.scorer}, DAgger labels ${flags.label}, searches ${flags.searchLabels}, listwise ${flags.listwise}; ` +
    `teacher Pass@1 on training tasks ${(100 * teacherPass / demos.length).toFixed(1)}%`)
  console.log(`RL: ${flags.rlIterations} iterations × ${flags.rlTasks} tasks × G=${flags.group}, dynamic sampling ${flags.dynamic} (≤ ${flags.rounds} draws), ${flags.credit} credit, ` +
    `entropy ${flags.entropy} × ${flags.entropyCoef}, lr ${flags.lr}, sampling temperature ${flags.rlTemperature}, answers ${flags.rlAnswer}; credit weights ${JSON.stringify(reward.credit)}; truncated rollouts' R_ans ${Reward.showTruncation(truncation)}`)
  // RL rolls out at its own temperature (as the pipeline's trainer); DAgger keeps the app's sampling policy, at 1
  const rlRollout = yield* Rollout.make({}).pipe(Effect.provide(LearnedPolicy.layer(cell, { decoding: "sample", temperature: flags.rlTemperature, sampledAnswer: flags.rlAnswer, answerThreshold: flags.answerThreshold, answerCover: flags.answerCover < 0 ? undefined : flags.answerCover, answerQuota: flags.answerQuota < 0 ? undefined : flags.answerQuota })))
  const trainer = yield* Trainer.make.pipe(Effect.provide(Layer.merge(Layer.succeed(Trainer.WeightsCell, cell), Layer.succeed(Rollout.Rollout, rlRollout))))

  /** The aggregate of each level's tasks (the pipeline's levels, in order). */
  const perLevel = (outcomes: ReadonlyArray<ReadonlyArray<Evaluation.Outcome>>): ReadonlyArray<Evaluation.Cell> =>
    options.levels.map((level) => Evaluation.aggregate(validation.flatMap((t, i) => (t.level === level ? [outcomes[i] ?? []] : []))))

  /** A model on the validation tasks: greedy and sampled, `rollouts` each; failures classified on the greedy rollouts. */
  const evaluate = (label: string, weights: LearnedPolicy.Weights, seed: number) =>
    Effect.gen(function*() {
      yield* Ref.set(cell, weights)
      const g = yield* scored(greedy, validation, `val-${seed}`, flags.rollouts)
      const s = flags.sampled ? yield* scored(sampling, validation, `val-${seed}`, flags.rollouts) : []
      const outcomes = g.map((group, i) => group.map((t) => Evaluation.outcomeOf(validation[i] as Task, t, { equivalent })))
      const cellG = Evaluation.aggregate(outcomes)
      const cellS = flags.sampled ? Evaluation.aggregate(s.map((group, i) => group.map((t) => Evaluation.outcomeOf(validation[i] as Task, t)))) : { pass1: NaN }
      let noSuccess = 0
      let notObserved = 0
      let notStated = 0
      g.flat().forEach((t, k) => {
        const o = (outcomes.flat())[k] as Evaluation.Outcome
        if (o.success) return
        if (!t.steps.some((st) => st.observations.some((ob) => ob.outcome._tag === "ok"))) noSuccess++
        else if (t.verdict?.utility !== "YES") notObserved++
        else notStated++
      })
      const levels = perLevel(outcomes)
      const byLevel = options.levels.map((level, k) => `${level} ${(100 * (levels[k] as Evaluation.Cell).pass1).toFixed(1)} @ ${(levels[k] as Evaluation.Cell).rounds.toFixed(2)}`).join(" ")
      const line = `${label.padEnd(18)} Pass@1 greedy ${(100 * cellG.pass1).toFixed(1).padStart(5)}% (${byLevel}), sampled ${(100 * cellS.pass1).toFixed(1).padStart(5)}%; ` +
        `Path ${(100 * cellG.path).toFixed(1)}% Path≈ ${(100 * cellG.pathEquivalent).toFixed(1)}%; rounds ${cellG.rounds.toFixed(2)} (T_max ended ${(100 * cellG.truncation).toFixed(0)}%), calls ${cellG.calls.toFixed(2)}; ` +
        `failed: no successful call ${noSuccess}, a gold fact not observed ${notObserved}, observed but not stated ${notStated}`
      // the same weights with the stop, and under ReAct: decoding and paradigm only, paired without training noise
      const variants = label === "SFT" || label === "Backbone" ? [] : [
        ...toggleRollouts.map((t) => ({ name: `${label} ${t.suffix}`, stop: undefined, ratioBase: false, rollout: t.rollout, paradigm: "ParaAct" as const })),
        ...stopRollouts.map((m) => ({ name: `${label} stop ${m.floor}`, stop: m.floor, ratioBase: true, rollout: m.rollout, paradigm: "ParaAct" as const })),
        ...(flags.react ? [{ name: `${label} ReAct`, stop: undefined, ratioBase: false, rollout: greedy, paradigm: "ReAct" as const }] : []),
        ...(flags.react ? stopRollouts.map((m) => ({ name: `${label} ReAct stop ${m.floor}`, stop: m.floor, ratioBase: false, rollout: m.rollout, paradigm: "ReAct" as const })) : [])
      ]
      // ParaAct's cells per level under each stop (the base decoding's first), for the ReAct variants' ratios
      const paraActLevels = new Map<number | undefined, ReadonlyArray<Evaluation.Cell>>([[undefined, levels]])
      for (const v of variants) {
        const vo = (yield* scored(v.rollout, validation, `val-${seed}`, flags.rollouts, v.paradigm)).map((group, i) => group.map((t) => Evaluation.outcomeOf(validation[i] as Task, t, { equivalent })))
        const vLevels = perLevel(vo)
        // a stop variant's ParaAct cells are what its ReAct twin's ratio reads (the toggled decodings have no twin)
        if (v.ratioBase) paraActLevels.set(v.stop, vLevels)
        const para = paraActLevels.get(v.stop) ?? []
        const byLevelV = options.levels.map((level, k) => {
          const cell = vLevels[k] as Evaluation.Cell
          const ratio = v.paradigm === "ReAct" ? `; ParaAct ${((para[k] as Evaluation.Cell).rounds / cell.rounds).toFixed(2)}× these` : ""
          return `${level} ${(100 * cell.pass1).toFixed(1)} @ ${cell.rounds.toFixed(2)} rounds${ratio}`
        }).join(", ")
        const all = Evaluation.aggregate(vo)
        console.log(`${v.name.padEnd(26)} Pass@1 greedy ${(100 * all.pass1).toFixed(1).padStart(5)}% (${byLevelV}); rounds ${all.rounds.toFixed(2)}`)
        successes[seed] = { ...successes[seed], [v.name]: vo.map((os) => [Stats.mean(os.map((o) => (o.success ? 1 : 0)))]) }
      }
      const result: Evaluated = {
        successes: outcomes.map((os) => Stats.mean(os.map((o) => (o.success ? 1 : 0)))),
        pass1: cellG.pass1,
        sampled: cellS.pass1,
        rounds: cellG.rounds,
        line
      }
      return result
    })

  const bySeed: Array<Record<string, Evaluated>> = []
  /** Per seed and model, each validation task's greedy success rate over its rollouts (for --outcomes). */
  const successes: Record<string, Record<string, ReadonlyArray<ReadonlyArray<number>>>> = {}
  const record = (seed: number, model: string, e: Evaluated) => {
    successes[seed] = { ...successes[seed], [model]: e.successes.map((x) => [x]) }
  }
  const rlStats: Array<{ seed: number; estimator: string; groups: number; skipped: number; curve: ReadonlyArray<number> }> = []
  for (const seed of seeds) {
    const models: Record<string, Evaluated> = {}
    const backbone = LearnedPolicy.initial(seed, flags.scorer)
    yield* Ref.set(cell, backbone)
    const sft = yield* trainer.sft(demos.map((trajectory, i) => ({ task: trainTasks[i] as Task, trajectory })), { epochs: options.sftEpochs, seed })
    const sftWeights = yield* Ref.get(cell)
    console.log(`seed ${seed}: SFT on ${sft.steps} demonstration steps (${sft.projectedWhole} whole, ${sft.projectedPartly} in part, ${sft.unprojected} not expressible)`)
    if (flags.backbone) {
      models["Backbone"] = yield* evaluate("Backbone", backbone, seed)
      console.log(models["Backbone"].line)
    }
    models["SFT"] = yield* evaluate("SFT", sftWeights, seed)
    record(seed, "SFT", models["SFT"])
    console.log(`${models["SFT"].line}; ${accuracy(sftWeights)}`)
    console.log(`SFT ${factors(sftWeights)}`)
    // RL starts from the DAgger checkpoint when there is one (as the pipeline does); "SFT" in the pairs is then DAgger
    let cloned = sftWeights
    if (flags.dagger > 0) {
      const report = yield* Dagger.run(trainTasks, demos.map((trajectory, i) => ({ task: trainTasks[i] as Task, trajectory })), { rounds: flags.dagger, epochs: flags.daggerEpochs, seed, equivalent: oracleEquivalent, label: flags.label, searchLabels: flags.searchLabels, forcedAnswers: flags.forcedAnswers, listwise: flags.listwise }).pipe(Effect.provideService(Trainer.WeightsCell, cell))
      cloned = yield* Ref.get(cell)
      console.log(`seed ${seed}: DAgger ${report.rounds.map((r) => `round ${r.round}: ${r.labelled} states labelled, aggregate ${r.aggregate}, NLL ${r.lossLast.toFixed(3)}`).join("; ")} (cold start ${report.coldStart}; ${(report.durationMs / 1000).toFixed(0)} s)`)
      models["SFT"] = yield* evaluate("DAgger", cloned, seed)
      record(seed, "DAgger", models["SFT"])
      console.log(`${models["SFT"].line}; ${accuracy(cloned)}`)
      console.log(`DAgger ${factors(cloned)}`)
    }
    for (const estimator of flags.rl ? estimators : []) {
      yield* Ref.set(cell, cloned)
      const report = yield* trainer.rl(trainTasks, {
        estimator,
        iterations: flags.rlIterations,
        tasksPerIteration: flags.rlTasks,
        group: flags.group,
        seed,
        concurrency: options.concurrency,
        reference: cloned,
        reward,
        credit: flags.credit,
        dynamicSampling: { filter: flags.dynamic, rounds: flags.rounds },
        adam: { ...Trainer.defaultRl.adam, lr: flags.lr },
        ppo: { ...Trainer.defaultRl.ppo, entropy: flags.entropy, entropyCoef: flags.entropyCoef, temperature: flags.rlTemperature }
      })
      const final = yield* Ref.get(cell)
      const { groups, skipped } = skippedOf(report)
      const curve = report.metrics.map((m) => m.pass1)
      const last = report.metrics[report.metrics.length - 1]
      rlStats.push({ seed, estimator, groups, skipped, curve })
      models[estimator] = yield* evaluate(estimator, final, seed)
      record(seed, estimator, models[estimator])
      console.log(`${models[estimator].line}; RL groups trained ${groups - skipped}/${groups} (${skipped} skipped); training Pass@1 per iteration ${curve.map((p) => (100 * p).toFixed(0)).join(" ")}; ` +
        `last iteration KL ${last?.kl.toExponential(2)}, clip ${((last?.clipFraction ?? NaN) * 100).toFixed(1)}%, entropy ${last?.entropy.toFixed(3)}`)
    }
    bySeed.push(models)
  }

  // paired differences over (seed, task), in points, with the bootstrap 95% interval (seeds and tasks resampled)
  const rows = [...(flags.backbone ? ["Backbone"] : []), "SFT", ...estimators]
  const pairs: Array<readonly [string, string]> = [
    ...(flags.backbone ? [["SFT", "Backbone"] as const] : []),
    ...estimators.map((e) => [e, "SFT"] as const),
    ...estimators.flatMap((a, i) => estimators.slice(i + 1).map((b) => [b, a] as const))
  ]
  const paired = pairs.map(([a, b]) => {
    const diffs = bySeed.map((m) => (m[a]?.successes ?? []).map((x, i) => 100 * (x - ((m[b]?.successes ?? [])[i] ?? NaN))))
    return { pair: `${a} − ${b}`, ...Stats.pairedBootstrap(diffs, { seed: 1 }) }
  })
  console.log(`\nPass@1 greedy over seeds ${seeds.join(", ")} (sampled): ${rows.map((r) => `${r} ${(100 * Stats.mean(bySeed.map((m) => m[r]?.pass1 ?? NaN))).toFixed(1)} (${(100 * Stats.mean(bySeed.map((m) => m[r]?.sampled ?? NaN))).toFixed(1)})`).join(", ")}`)
  console.log(`Rounds: ${rows.map((r) => `${r} ${Stats.mean(bySeed.map((m) => m[r]?.rounds ?? NaN)).toFixed(2)}`).join(", ")}`)
  console.log("Paired differences, points of Pass@1 (greedy), mean [bootstrap 95% CI]:")
  for (const p of paired) console.log(`  ${p.pair.padEnd(36)} ${Pipeline.formatPaired(p)}`)
  if (flags.json) {
    console.log(JSON.stringify({
      settings: { ...flags, estimators, seeds },
      models: Object.fromEntries(rows.map((r) => [r, { pass1: bySeed.map((m) => m[r]?.pass1), sampled: bySeed.map((m) => m[r]?.sampled), rounds: bySeed.map((m) => m[r]?.rounds) }])),
      rl: rlStats,
      paired
    }))
  }
  if (Option.isSome(flags.outcomes)) {
    fs.writeFileSync(flags.outcomes.value, JSON.stringify({ scorer: flags.scorer, label: flags.label, tasks: validation.map((t) => t.id), clusters: validation.map(Pipeline.categorySet), successes }) + "\n")
  }
})

await Effect.runPromise(program.pipe(Effect.provide(app), Effect.orDie) as Effect.Effect<void>)

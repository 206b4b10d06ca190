/**
 * The paper's pipeline behind `npm start`: teacher demonstrations on training tasks → judge filter → SFT → RL from
 * the same SFT checkpoint with `grpo` and with `paraagent` → evaluation on held-out tasks of Backbone / +SFT /
 * +SFT & RL (GRPO) / +SFT & RL (ours) over several seeds, and the trained policy under each paradigm. Every stage
 * lands in the run store as it finishes, so `--resume` continues after a crash without redoing finished work.
 */
import { Effect, Layer, Option, Ref } from "effect"
import type { Json } from "../domain/Json.ts"
import type { Task } from "../domain/Task.ts"
import type { Paradigm, Trajectory } from "../domain/Trajectory.ts"
import * as LearnedPolicy from "../agent/LearnedPolicy.ts"
import { Policy } from "../agent/Policy.ts"
import * as StudentOracle from "../agent/StudentOracle.ts"
import * as Teacher from "../agent/Teacher.ts"
import * as Evaluation from "../math/Evaluation.ts"
import type * as PolicyGradient from "../math/PolicyGradient.ts"
import { hashParts } from "../math/Random.ts"
import * as Reward from "../math/Reward.ts"
import { mean } from "../math/Stats.ts"
import * as Progress from "../io/Progress.ts"
import type * as Report from "../eval/Report.ts"
import type * as TrajectoryBrowser from "../eval/TrajectoryBrowser.ts"
import * as Scoring from "../eval/Scoring.ts"
import { Judge } from "../judge/Judge.ts"
import { Retriever } from "../retrieval/Retriever.ts"
import * as Rollout from "../runtime/Rollout.ts"
import { Simulator } from "../toolenv/Simulator.ts"
import { TaskSource } from "../toolenv/TaskSource.ts"
import { ToolLibrary } from "../toolenv/ToolLibrary.ts"
import { GeneratedWorld } from "../toolenv/world/World.ts"
import * as Dagger from "./Dagger.ts"
import { RunStore } from "./RunStore.ts"
import type { RunStoreError } from "./RunStore.ts"
import * as Trainer from "./Trainer.ts"
import { oursEstimator, type PipelineOptions } from "./PipelineOptions.ts"
import { PipelineError, ceilingLabel, cellOf, estimatorModel, modelLabels, models, overSeeds, pairedDifferences, pairs, type CellMetrics, type LevelTable, type MeanSd, type Model, type PairedDifference, type PipelineResult, type SeedResult, type SeedRunner, type Summary } from "./PipelineResults.ts"
import { announceIteration, noPlan, planTracker, type PlanTracker } from "./PipelineProgress.ts"
export { defaults, oursEstimator, type PipelineOptions } from "./PipelineOptions.ts"
export { PipelineError, categorySet, ceilingLabel, formatPaired, metricsCsv, modelLabels, models, overSeeds, pairedDifferences, pairs, renderAblation, type CellMetrics, type LevelTable, type MeanSd, type Model, type PairedDifference, type PipelineResult, type SeedResult, type SeedRunner, type Summary } from "./PipelineResults.ts"
export { plannedStages, stageWeights, type PlanTracker } from "./PipelineProgress.ts"

const toJson = (value: unknown): Json => JSON.parse(JSON.stringify(value)) as Json

const weightsState = (w: LearnedPolicy.Weights): Json => ({ version: w.version, shape: { input: w.params.shape.input, hidden: [...w.params.shape.hidden] } })

/** The shared context of a run: the services, task draws, and the stage helpers over the run store. */
const prepare = (runId: string, options: PipelineOptions) =>
  Effect.gen(function*() {
    const store = yield* RunStore
    const source = yield* TaskSource
    const library = yield* ToolLibrary
    const judge = yield* Judge
    const retriever = yield* Retriever
    const simulator = yield* Simulator
    const base = Layer.mergeAll(
      Layer.succeed(ToolLibrary, library),
      Layer.succeed(Judge, judge),
      Layer.succeed(Retriever, retriever),
      Layer.succeed(Simulator, simulator)
    )
    const trainTasks = yield* source.sample({ split: "train", count: options.trainTasks, levels: options.levels, seed: options.taskSeed })
    const testTasks = yield* source.sample({ split: "test", count: options.testTasksPerLevel * options.levels.length, levels: options.levels, seed: options.taskSeed })
    const maxRounds = Rollout.defaultConfig.maxRounds

    /**
     * `size` rollouts of each of many tasks (environment seeds seedOf(task), +1, …), each task's group stored as it
     * finishes; a stored group is read back instead of re-run.
     */
    const rolloutStage = (
      stage: string,
      rollout: Rollout.RolloutService,
      tasks: ReadonlyArray<Task>,
      paradigm: Paradigm,
      seedOf: (task: Task) => number,
      label: string,
      size = 1,
      progress$: boolean = options.progress
    ) =>
      Effect.gen(function*() {
        const byKey = yield* storedGroups(store, runId, stage)
        const progress = Progress.make(label, tasks.length, progress$)
        const out = yield* Effect.forEach(tasks, (task) =>
          Effect.gen(function*() {
            const known = byKey.get(task.id)
            if (known !== undefined && known.length === size) {
              yield* progress.tick(1)
              return known
            }
            const trajectories = yield* rollout.runGroup(task, { paradigm, seed: seedOf(task), size })
            const scored = yield* Scoring.scoreGroup(task, trajectories, { reward: Reward.defaultRewardConfig, estimator: "grpo" }).pipe(Effect.provide(base))
            yield* store.putTrajectories(runId, stage, task.id, 0, scored)
            yield* progress.tick(1)
            return scored
          }), { concurrency: options.concurrency })
        yield* progress.done
        return out
      })

    // the oracle's equivalent providers: the generated world's operations when the world is there
    const world = yield* Effect.serviceOption(GeneratedWorld)
    const oracleEquivalent = Option.isSome(world) ? StudentOracle.worldEquivalence(world.value.ops) : StudentOracle.sameToolOnly
    const oracleRollout = Rollout.make({ maxRounds }).pipe(Effect.provide(Layer.merge(base, StudentOracle.layer(oracleEquivalent).pipe(Layer.provide(base)))))

    const learnedRollout = (cell: Ref.Ref<LearnedPolicy.Weights>, decoding: "sample" | "greedy" = "sample", temperature = 1) =>
      Rollout.make({ maxRounds }).pipe(Effect.provide(Layer.merge(base, Layer.succeed(Policy, LearnedPolicy.make(cell, { ...LearnedPolicy.evalDecoding, decoding, temperature })))))

    /** The teacher's judged demonstrations on the training tasks (stage `demonstrations`); a bar when `progress`. */
    const demonstrations = (progress: boolean) => Effect.gen(function*() {
      const teacher = yield* Rollout.make({ maxRounds }).pipe(
        Effect.provide(Layer.merge(base, Teacher.layer({ mistakeRate: options.teacherMistakeRate, firstQuery: options.teacherFirstQuery }).pipe(Layer.provide(base)))),
        Effect.mapError((e) => new PipelineError({ stage: "demonstrations", message: e.message }))
      )
      const groups = yield* rolloutStage("demonstrations", teacher, trainTasks, "ParaAct", (t) => hashParts(options.taskSeed, "demo", t.id) & 0x3fffffff, "teacher demonstrations", 1, progress).pipe(
        Effect.mapError((e) => new PipelineError({ stage: "demonstrations", message: e.message }))
      )
      return groups.map((group, i): Trainer.Demonstration => ({ task: trainTasks[i] as Task, trajectory: group[0] as Trajectory }))
    })

    // the same equivalence by tool name, for Path≈ and the reward's coverage
    const equivalent = yield* Scoring.equivalence
    return { store, library, base, trainTasks, testTasks, rolloutStage, learnedRollout, oracleRollout, oracleEquivalent, demonstrations, equivalent }
  })

/**
 * One seed: SFT from the seeded Backbone, RL from that SFT checkpoint with each estimator (same tasks, same rollout
 * seeds), and the held-out evaluation of the four rows and of the trained policy under each paradigm.
 */
export const runSeed = Effect.fn("Pipeline.runSeed")(function*(runId: string, options: PipelineOptions, seed: number, plan?: PlanTracker) {
  const { store, base, trainTasks, testTasks, rolloutStage, learnedRollout, oracleRollout, oracleEquivalent, demonstrations: demonstrate, equivalent } = yield* prepare(runId, options)
  const fail = (stage: string) => (e: RunStoreError | Trainer.TrainerError | Scoring.ScoringError | PipelineError) => new PipelineError({ stage, message: e.message })
  // the demonstrations were made (or read back) by `run` before the seeds: here they are only read back, with no bar
  const demonstrations = yield* demonstrate(false)
  const track = plan ?? noPlan
  const stages: Array<Report.Stage> = []
  const cells: Record<string, Record<string, CellMetrics>> = {}

  /** Held-out evaluation: `size` rollouts per test task with the given decoding (the same environment seeds for every model). */
  const evaluate = (stage: string, weights: LearnedPolicy.Weights, paradigm: Paradigm, decoding: "sample" | "greedy", size: number) =>
    Effect.gen(function*() {
      const cell = yield* Ref.make(weights)
      const r = yield* learnedRollout(cell, decoding)
      const restored = (yield* storedGroups(store, runId, stage)).size >= testTasks.length
      yield* track.start(stage, `${testTasks.length} held-out tasks, ${paradigm}, ${size} ${decoding === "greedy" ? "greedy" : "sampled"} rollouts each`)
      const groups = yield* rolloutStage(stage, r, testTasks, paradigm, (t) => hashParts(seed, "eval", t.id) & 0x3fffffff, stage, size)
      yield* track.finish(stage, restored)
      const byLevel: Record<string, CellMetrics> = {}
      for (const level of options.levels) {
        const idx = testTasks.flatMap((t, i) => (t.level === level ? [i] : []))
        byLevel[level] = cellOf(idx.map((i) => testTasks[i] as Task), idx.map((i) => groups[i] as ReadonlyArray<Trajectory>), equivalent)
      }
      const successes = groups.map((g, i) => mean(g.map((t) => (Evaluation.outcomeOf(testTasks[i] as Task, t).success ? 1 : 0))))
      return { cells: byLevel, groups, successes }
    })

  const backbone = LearnedPolicy.initial(seed)
  const cell = yield* Ref.make(backbone)
  const rollout = yield* learnedRollout(cell)
  // RL samples at its own temperature (SFT does not roll out; DAgger keeps `rollout`, at 1)
  const rlRollout = yield* learnedRollout(cell, "sample", options.rlTemperature)
  const trainer = yield* Trainer.make.pipe(
    Effect.provide(Layer.mergeAll(base, Layer.succeed(Rollout.Rollout, rlRollout), Layer.succeed(Trainer.WeightsCell, cell)))
  )

  // --- SFT from the Backbone (a stored checkpoint is read back)
  const sftStage = `sft/seed${seed}`
  // the stage's finished mark decides: a checkpoint without it (a crash between the two writes) is redone —
  // SFT is deterministic, and the checkpoint row is replaced
  const storedSft = yield* store.latestCheckpoint(runId, sftStage).pipe(Effect.mapError(fail(sftStage)))
  const sftDone = yield* store.stageResult(runId, sftStage).pipe(Effect.mapError(fail(sftStage)))
  let sft: LearnedPolicy.Weights
  let sftReport: Trainer.SftReport
  yield* track.start(sftStage, `${options.sftEpochs} epochs over ${demonstrations.length} demonstrations`)
  if (storedSft !== undefined && sftDone !== undefined) {
    sft = { params: { shape: LearnedPolicy.shape, data: Float64Array.from(storedSft.params) }, version: (storedSft.state as { version: number }).version }
    sftReport = sftDone as unknown as Trainer.SftReport
  } else {
    sftReport = yield* trainer.sft(demonstrations, { epochs: options.sftEpochs, seed, progress: options.progress }).pipe(Effect.mapError(fail(sftStage)))
    sft = yield* Ref.get(cell)
    yield* store.putCheckpoint(runId, sftStage, 0, { params: sft.params.data, optimiser: [], state: weightsState(sft) }).pipe(Effect.mapError(fail(sftStage)))
    yield* store.markStage(runId, sftStage, toJson(sftReport)).pipe(Effect.mapError(fail(sftStage)))
  }
  yield* track.finish(sftStage, storedSft !== undefined && sftDone !== undefined)
  // --- DAgger from the SFT checkpoint: the student's states labelled by the student-space oracle (a stored one is read back)
  if (options.daggerRounds > 0) {
    const daggerStage = `dagger/seed${seed}`
    const stored = yield* store.latestCheckpoint(runId, daggerStage).pipe(Effect.mapError(fail(daggerStage)))
    const done = yield* store.stageResult(runId, daggerStage).pipe(Effect.mapError(fail(daggerStage)))
    yield* track.start(daggerStage, `${options.daggerRounds} rounds over ${trainTasks.length} training tasks`)
    if (stored !== undefined && done !== undefined) {
      sft = { params: { shape: LearnedPolicy.shape, data: Float64Array.from(stored.params) }, version: (stored.state as { version: number }).version }
    } else {
      yield* Ref.set(cell, sft)
      const t0 = Date.now()
      const report = yield* Dagger.run(trainTasks, demonstrations, { rounds: options.daggerRounds, seed, equivalent: oracleEquivalent, concurrency: options.concurrency, progress: options.progress }).pipe(
        Effect.provide(Layer.mergeAll(base, Layer.succeed(Rollout.Rollout, rollout), Layer.succeed(Trainer.WeightsCell, cell))),
        Effect.mapError(fail(daggerStage))
      )
      sft = yield* Ref.get(cell)
      yield* store.putCheckpoint(runId, daggerStage, 0, { params: sft.params.data, optimiser: [], state: weightsState(sft) }).pipe(Effect.mapError(fail(daggerStage)))
      yield* store.markStage(runId, daggerStage, toJson(report)).pipe(Effect.mapError(fail(daggerStage)))
      stages.push({
        name: `DAgger (seed ${seed})`,
        durationMs: Date.now() - t0,
        detail: `${report.rounds.length} rounds: ${report.rounds.map((r) => `${r.labelled} states labelled by the oracle`).join(", ")}; aggregate ${report.rounds.at(-1)?.aggregate ?? report.coldStart} (cold start ${report.coldStart} projected teacher steps)`
      })
    }
    yield* track.finish(daggerStage, stored !== undefined && done !== undefined)
  }
  stages.push({
    name: `SFT (seed ${seed})`,
    durationMs: sftReport.durationMs,
    detail: `${sftReport.steps} demonstration steps: ${sftReport.projectedWhole} projected whole, ${sftReport.projectedPartly} in part, ${sftReport.unprojected} not expressible; ${sftReport.droppedActions} of ${sftReport.totalActions} actions dropped; NLL ${sftReport.lossFirst.toFixed(2)} → ${sftReport.lossLast.toFixed(2)}`
  })

  // --- RL from the same SFT checkpoint, once per estimator
  const finals = new Map<string, LearnedPolicy.Weights>()
  const rl: Array<{ estimator: string; metrics: ReadonlyArray<Trainer.IterationMetrics> }> = []
  let experience: ReadonlyArray<Trajectory> = []
  for (const estimator of options.estimators) {
    const stage = `rl/${estimator}/seed${seed}`
    yield* Ref.set(cell, sft)
    const done = yield* store.stageResult(runId, stage).pipe(Effect.mapError(fail(stage)))
    const t0 = Date.now()
    yield* track.start(stage, `${options.rlIterations} iterations × ${options.rlTasksPerIteration} tasks × G=${options.group}`)
    const label = `${estimator} seed ${seed}`
    const report = yield* trainer.rl(trainTasks, {
      estimator,
      dynamicSampling: options.dynamicSampling,
      credit: options.credit,
      reward: { ...Trainer.defaultRl.reward, answer: { ...Trainer.defaultRl.reward.answer, truncation: options.truncation } },
      ppo: { ...Trainer.defaultRl.ppo, temperature: options.rlTemperature },
      iterations: options.rlIterations,
      tasksPerIteration: options.rlTasksPerIteration,
      group: options.group,
      seed,
      concurrency: options.concurrency,
      progress: options.progress && done === undefined,
      label,
      checkpointer: checkpointerFor(store, runId, stage, options.progress ? announceIteration(`rl ${label}`, options.rlIterations) : undefined),
      reference: sft
    }).pipe(Effect.mapError(fail(stage)))
    if (done === undefined) yield* store.markStage(runId, stage, toJson({ iterations: report.metrics.length })).pipe(Effect.mapError(fail(stage)))
    yield* track.finish(stage, done !== undefined || report.resumedFrom !== undefined)
    finals.set(estimator, yield* Ref.get(cell))
    rl.push({ estimator, metrics: report.metrics })
    const groups = report.metrics.reduce((n, m) => n + m.groups, 0)
    const skipped = report.metrics.reduce((n, m) => n + m.groupsSkipped, 0)
    stages.push({
      name: `RL to ${modelLabels[estimatorModel(estimator)]}, estimator ${estimator} (seed ${seed})`,
      durationMs: Date.now() - t0,
      detail: `${report.metrics.length} iterations × ${options.rlTasksPerIteration} tasks × G=${options.group}; ${groups - skipped} of ${groups} groups trained, ${skipped} skipped (outcomes did not differ)${report.resumedFrom !== undefined ? `, resumed after iteration ${report.resumedFrom}` : ""}`
    })
    if (estimator === oursEstimator(options)) {
      experience = yield* store.trajectories(runId, stage, { iteration: Math.max(0, options.rlIterations - 1) }).pipe(Effect.mapError(fail(stage)))
    }
  }

  // --- held-out evaluation of the four rows, and the trained policy under each paradigm
  const rows: ReadonlyArray<readonly [Model, LearnedPolicy.Weights]> = [
    ["Backbone", backbone],
    ["SFT", sft],
    ...options.estimators.map((e) => [estimatorModel(e), finals.get(e) as LearnedPolicy.Weights] as const)
  ]
  let timeline: Trajectory | undefined
  const successes: Record<string, ReadonlyArray<number>> = {}
  for (const [model, weights] of rows) {
    const t0 = Date.now()
    const result = yield* evaluate(`eval/${model}/seed${seed}/ParaAct`, weights, "ParaAct", "greedy", options.evalRollouts).pipe(Effect.mapError(fail(`eval ${model}`)))
    cells[model] = result.cells
    successes[model] = result.successes
    if (options.evalSampled > 0) {
      const sampled = yield* evaluate(`eval/${model}/seed${seed}/ParaAct/sampled`, weights, "ParaAct", "sample", options.evalSampled).pipe(Effect.mapError(fail(`eval ${model} sampled`)))
      cells[`sampled:${model}`] = sampled.cells
    }
    stages.push({
      name: `evaluate ${modelLabels[model]} (seed ${seed})`,
      durationMs: Date.now() - t0,
      detail: `${testTasks.length} held-out tasks, ParaAct: ${options.evalRollouts} greedy rollouts each, ${options.evalSampled} sampled`
    })
    if (model === "Ours") {
      cells["paradigm:ParaAct"] = result.cells
      timeline = result.groups.flat().find((t) => t.steps.some((s) => s.observations.length >= 2))
    }
  }
  // --- the ceiling: the student-space oracle on the same tasks and rollout seeds (privileged; scores no learned model)
  {
    const t0 = Date.now()
    const oracle = yield* oracleRollout
    const stage = `eval/ceiling/seed${seed}/ParaAct`
    // read back on a resumed run: it then teaches the ETA nothing
    const restored = (yield* storedGroups(store, runId, stage).pipe(Effect.mapError(fail("eval ceiling")))).size >= testTasks.length
    yield* track.start(stage, `${testTasks.length} held-out tasks, the student-space oracle, ${options.evalRollouts} rollouts each`)
    const groups = yield* rolloutStage(stage, oracle, testTasks, "ParaAct", (t) => hashParts(seed, "eval", t.id) & 0x3fffffff, stage, options.evalRollouts).pipe(Effect.mapError(fail("eval ceiling")))
    const byLevel: Record<string, CellMetrics> = {}
    for (const level of options.levels) {
      const idx = testTasks.flatMap((t, i) => (t.level === level ? [i] : []))
      byLevel[level] = cellOf(idx.map((i) => testTasks[i] as Task), idx.map((i) => groups[i] as ReadonlyArray<Trajectory>), equivalent)
    }
    cells["ceiling"] = byLevel
    yield* track.finish(stage, restored)
    stages.push({ name: `evaluate the ceiling (seed ${seed})`, durationMs: Date.now() - t0, detail: `${testTasks.length} held-out tasks, ParaAct, the student-space oracle (privileged), ${options.evalRollouts} rollouts each` })
  }
  const ours = finals.get(oursEstimator(options) ?? "") ?? finals.get(options.estimators[options.estimators.length - 1] ?? "") ?? sft
  for (const paradigm of options.paradigms) {
    if (paradigm === "ParaAct") continue
    const t0 = Date.now()
    const result = yield* evaluate(`eval/Ours/seed${seed}/${paradigm}`, ours, paradigm, "greedy", options.evalRollouts).pipe(Effect.mapError(fail(`eval ${paradigm}`)))
    stages.push({ name: `evaluate ours under ${paradigm} (seed ${seed})`, durationMs: Date.now() - t0, detail: `${testTasks.length} held-out tasks, ${options.evalRollouts} greedy rollouts each` })
    cells[`paradigm:${paradigm}`] = result.cells
  }
  const result: SeedResult = {
    seed,
    sft: sftReport,
    rl,
    cells,
    successes,
    stages,
    ours: { data: ours.params.data, version: ours.version },
    ...(timeline !== undefined ? { timeline } : {}),
    experience
  }
  return result
})

/**
 * Runs the pipeline (or resumes it: every finished stage is read back from the store): the demonstrations, then
 * each seed in-process, or — given a worker `runner` — the first seed in-process and the others on workers,
 * `concurrency` seeds at once.
 */
export const run = Effect.fn("Pipeline.run")(function*(
  runId: string,
  options: PipelineOptions,
  seeds?: { readonly runner: SeedRunner; readonly concurrency: number }
) {
  const t0 = Date.now()
  const { library, testTasks, trainTasks, demonstrations: demonstrate, store } = yield* prepare(runId, options)
  const tracker = planTracker(options, seeds === undefined)
  const storedDemos = (yield* storedGroups(store, runId, "demonstrations").pipe(Effect.mapError((e) => new PipelineError({ stage: "demonstrations", message: e.message })))).size
  yield* tracker.start("demonstrations", `the multi-agent teacher on ${trainTasks.length} training tasks`)
  const demonstrations = yield* demonstrate(options.progress)
  yield* tracker.finish("demonstrations", storedDemos >= trainTasks.length)
  const kept = demonstrations.filter((d) => Trainer.keeps("pass", d.trajectory)).length
  const stages: Array<Report.Stage> = [
    { name: "teacher demonstrations", durationMs: Date.now() - t0, detail: `${demonstrations.length} rollouts of the multi-agent teacher on training tasks` },
    { name: "judge filter", durationMs: 0, detail: `kept ${kept} / dropped ${demonstrations.length - kept} (rule: Quality, Faithfulness and Utility YES, as Pass@1)` }
  ]
  const context = yield* Effect.context<RunStore | TaskSource | ToolLibrary | Judge | Retriever | Simulator>()
  const inProcess: SeedRunner = (seed) => runSeed(runId, options, seed, seeds === undefined ? tracker : undefined).pipe(Effect.provide(context))
  // the first seed runs on this thread, which holds a world already; the others on workers (a world each), whose
  // stages the plan counts a seed at a time
  const runner: SeedRunner = seeds === undefined
    ? inProcess
    : (seed) =>
      tracker.start(`seed ${seed}`, "SFT, RL, evaluation").pipe(
        Effect.andThen(seed === options.seeds[0] ? inProcess(seed) : seeds.runner(seed)),
        Effect.tap(() => tracker.finish(`seed ${seed}`, false))
      )
  const progress = Progress.make(`seeds (SFT, RL ×${options.estimators.length}, evaluation)`, options.seeds.length, options.progress && seeds !== undefined)
  const results = yield* Effect.forEach(options.seeds, (seed) => Effect.tap(runner(seed), () => progress.tick(1)), { concurrency: seeds?.concurrency ?? 1 })
  yield* progress.done

  const collect = (key: string) => results.map((r) => r.cells[key] as Record<string, CellMetrics>)
  const ablation = Object.fromEntries(models.map((m) => [m, overSeeds(collect(m), options.levels)])) as Record<Model, LevelTable>
  const paradigms = Object.fromEntries(options.paradigms.map((p) => [p, overSeeds(collect(`paradigm:${p}`), options.levels)]))
  const sampled = Object.fromEntries(models.map((m) => {
    const cells = collect(`sampled:${m}`)
    const table = cells.every((c) => c !== undefined) ? overSeeds(cells, options.levels) : {}
    return [m, Object.fromEntries(Object.entries(table).map(([level, row]) => [level, { pass1: row.pass1 }]))]
  })) as Record<Model, Record<string, { pass1: MeanSd }>>
  const paired = pairedDifferences(results, testTasks, options.levels)
  const ceiling = results.every((r) => r.cells["ceiling"] !== undefined) ? overSeeds(collect("ceiling"), options.levels) : undefined
  const summary: Summary = {
    ablation,
    ...(ceiling !== undefined ? { ceiling } : {}),
    paradigms,
    sampled,
    paired: paired.all,
    pairedLevels: paired.levels,
    pairedByCategory: paired.byCategory,
    training: {
      demonstrations: demonstrations.length,
      kept,
      sft: results.map((r) => r.sft),
      rl: results.flatMap((r) => r.rl.map((x) => ({ seed: r.seed, estimator: x.estimator, metrics: x.metrics })))
    },
    run: {
      seeds: options.seeds,
      testTasks: testTasks.length,
      trainTasks: trainTasks.length,
      library: library.label,
      evalRollouts: options.evalRollouts,
      evalSampled: options.evalSampled,
      evalAnswerThreshold: LearnedPolicy.evalAnswerThreshold,
      evalAnswerCover: LearnedPolicy.evalAnswerCover,
      evalAnswerQuota: LearnedPolicy.evalAnswerQuota,
      evalAnswerRecords: LearnedPolicy.evalAnswerRecords
    }
  }
  const first = results[0] as SeedResult
  const timeline = first.timeline
  const timelineTask = timeline === undefined ? undefined : testTasks.find((t) => t.id === timeline.taskId)
  const report: Omit<Report.ReportInput, "title" | "command"> = {
    seeds: options.seeds,
    curves: results.flatMap((r) => r.rl.map((x): Report.Curve => ({
      estimator: x.estimator,
      seed: r.seed,
      points: x.metrics.map((m) => ({ iteration: m.iteration, rAns: m.rAns, pass1: m.pass1, rounds: m.rounds, calls: m.calls, kl: m.kl, clipFraction: m.clipFraction, entropy: m.entropy }))
    }))),
    // the report's Table 2 shows the sampled Pass@1 beside the greedy one
    ablation: {
      ...Object.fromEntries(models.map((m) => [
        modelLabels[m],
        Object.fromEntries(Object.entries(ablation[m]).map(([level, row]) => [level, { ...row, ...(sampled[m][level] !== undefined ? { pass1Sampled: sampled[m][level].pass1 } : {}) }]))
      ])),
      ...(ceiling !== undefined ? { [ceilingLabel]: ceiling } : {})
    },
    modelNames: Object.fromEntries(options.estimators.map((e) => [e, modelLabels[estimatorModel(e)]])),
    paradigms,
    paired: {
      caption: "Points of Pass@1 (greedy) on the same held-out tasks: mean over seeds × tasks [bootstrap 95% CI, seeds and tasks resampled].",
      columns: ["All", ...options.levels],
      rows: pairs.map(([a, b]) => {
        const key = `${a}-${b}`
        return { pair: key, cells: { All: summary.paired[key] as PairedDifference, ...Object.fromEntries(options.levels.map((l) => [l, summary.pairedLevels[l]?.[key] as PairedDifference])) } }
      })
    },
    stages: [...stages, ...results.flatMap((r) => r.stages)],
    ...(timeline !== undefined && timelineTask !== undefined ? { timeline: { taskId: timelineTask.id, request: timelineTask.request, trajectory: timeline } } : {})
  }
  const result: PipelineResult = {
    summary,
    report,
    shipped: { params: { shape: LearnedPolicy.shape, data: Float64Array.from(first.ours.data) }, version: first.ours.version },
    demonstrations,
    experience: first.experience,
    testTasks,
    lookup: (name) => library.get(name)
  }
  return result
})

/** A stage's stored groups (of one iteration, when given) by key: the store's trajectories cut at the group sizes. */
const storedGroups = (store: RunStore["Service"], runId: string, stage: string, iteration?: number) =>
  Effect.gen(function*() {
    const filter = iteration === undefined ? undefined : { iteration }
    const groups = yield* store.groups(runId, stage, filter)
    const stored = yield* store.trajectories(runId, stage, filter)
    const byKey = new Map<string, ReadonlyArray<Trajectory>>()
    let at = 0
    for (const g of groups) {
      byKey.set(g.key, stored.slice(at, at + g.size))
      at += g.size
    }
    return byKey as ReadonlyMap<string, ReadonlyArray<Trajectory>>
  })

/** RL's checkpointer over the run store: checkpoints with their metrics, and each finished group. */
const checkpointerFor = (
  store: RunStore["Service"],
  runId: string,
  stage: string,
  announce?: (metrics: Trainer.IterationMetrics) => Effect.Effect<void>
): Trainer.Checkpointer => {
  const wrap = (e: RunStoreError) => new Trainer.TrainerError({ stage, message: e.message })
  const cache = new Map<number, ReadonlyMap<string, ReadonlyArray<Trajectory>>>()
  return {
    latest: Effect.gen(function*() {
      const stored = yield* store.latestCheckpoint(runId, stage)
      if (stored === undefined) return undefined
      const state = stored.state as unknown as { version: number; t: number; metrics: ReadonlyArray<Trainer.IterationMetrics> }
      const adam: PolicyGradient.AdamState = { m: Float64Array.from(stored.optimiser[0] ?? []), v: Float64Array.from(stored.optimiser[1] ?? []), t: state.t }
      const checkpoint: Trainer.Checkpoint = {
        iteration: stored.iteration,
        weights: { params: { shape: LearnedPolicy.shape, data: Float64Array.from(stored.params) }, version: state.version },
        adam,
        metrics: state.metrics
      }
      return checkpoint
    }).pipe(Effect.mapError(wrap)),
    save: (checkpoint) =>
      Effect.gen(function*() {
          const last = checkpoint.metrics[checkpoint.metrics.length - 1]
        yield* store.putCheckpoint(
          runId,
          stage,
          checkpoint.iteration,
          {
            params: checkpoint.weights.params.data,
            optimiser: [checkpoint.adam.m, checkpoint.adam.v],
            state: toJson({ version: checkpoint.weights.version, t: checkpoint.adam.t, metrics: checkpoint.metrics })
          },
          last === undefined ? undefined : toJson(last)
        )
        if (announce !== undefined && last !== undefined) yield* announce(last)
      }).pipe(Effect.mapError(wrap)),
    group: (iteration, key) =>
      Effect.gen(function*() {
        let byKey = cache.get(iteration)
        if (byKey === undefined) {
          byKey = yield* storedGroups(store, runId, stage, iteration)
          cache.set(iteration, byKey)
        }
        return byKey.get(key)
      }).pipe(Effect.mapError(wrap)),
    putGroup: (iteration, key, trajectories) =>
      Effect.gen(function*() {
          yield* store.putTrajectories(runId, stage, key, iteration, trajectories)
      }).pipe(Effect.mapError(wrap))
  }
}


/**
 * Visits every held-out trajectory of a run, read back from the run store (the `eval/<model>/seed<k>/<paradigm>`
 * stages), for the trajectory browser: the four rows under ParaAct (greedy, then sampled), then the trained policy
 * under the other paradigms, seed by seed — one stage's trajectories in memory at a time.
 */
export const eachHeldOut = <E, R>(
  runId: string,
  options: PipelineOptions,
  testTasks: ReadonlyArray<Task>,
  visit: (entry: TrajectoryBrowser.BrowserEntry) => Effect.Effect<void, E, R>
) =>
  Effect.gen(function*() {
    const store = yield* RunStore
    const byId = new Map(testTasks.map((t) => [t.id as string, t]))
    const rows = [...new Set([...models.slice(0, 2), ...options.estimators.map(estimatorModel)])]
    const stages = options.seeds.flatMap((seed) => [
      ...rows.flatMap((m) => [
        { stage: `eval/${m}/seed${seed}/ParaAct`, model: modelLabels[m], seed },
        ...(options.evalSampled > 0 ? [{ stage: `eval/${m}/seed${seed}/ParaAct/sampled`, model: `${modelLabels[m]}, sampled`, seed }] : [])
      ]),
      ...options.paradigms.filter((p) => p !== "ParaAct").map((p) => ({ stage: `eval/Ours/seed${seed}/${p}`, model: modelLabels.Ours, seed }))
    ])
    // one stage's trajectories in memory at a time
    for (const { stage, model, seed } of stages) {
      for (const trajectory of yield* store.trajectories(runId, stage)) {
        const task = byId.get(trajectory.taskId)
        yield* visit({ model, seed, level: task?.level ?? "?", request: task?.request ?? "", trajectory })
      }
    }
  })

/** Every held-out trajectory of the run at once, in {@link eachHeldOut}'s order (the browser of a small run, tests). */
export const heldOutEntries = (runId: string, options: PipelineOptions, testTasks: ReadonlyArray<Task>) =>
  Effect.gen(function*() {
    const entries: Array<TrajectoryBrowser.BrowserEntry> = []
    yield* eachHeldOut(runId, options, testTasks, (entry) => Effect.sync(() => void entries.push(entry)))
    return entries as ReadonlyArray<TrajectoryBrowser.BrowserEntry>
  })

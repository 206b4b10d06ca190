/**
 * Progress a person can plan by: the run's stages in order with an overall counter and an estimate of the time left,
 * and a stderr line of training-split metrics per finished RL iteration.
 */
import { Effect } from "effect"
import * as Progress from "../io/Progress.ts"
import type * as Trainer from "./Trainer.ts"
import type { PipelineOptions } from "./PipelineOptions.ts"
import { estimatorModel, modelLabels, models } from "./PipelineResults.ts"

// ---------------------------------------------------------------------------------------------------------------
// Progress a person can plan by: the stages in order with an overall counter and an estimate of the time left, and a
// line of metrics per RL iteration (all on stderr)

/** The plan of a run, addressed by the run store's stage names (`demonstrations`, `sft/seed1`, `rl/grpo/seed1`, …). */
export interface PlanTracker {
  readonly start: (stage: string, detail?: string) => Effect.Effect<void>
  readonly finish: (stage: string, restored: boolean) => Effect.Effect<void>
}

export const noPlan: PlanTracker = { start: () => Effect.void, finish: () => Effect.void }

/**
 * A unit's first-guess cost per kind of stage, relative to one evaluation rollout of the learned policy — measured on
 * a one-seed run of this pipeline (80 training tasks, 30 held-out tasks per level, 3 RL iterations of 8 tasks × G=4;
 * 2026-12-03, 2 cores): a teacher rollout costs ~1.5 of them, an RL rollout with its share of the update ~2.3, an SFT
 * epoch over one demonstration ~0.12; a DAgger round over one training task (the student's rollout, the oracle's labels
 * with their searches, and its share of the cloning) is guessed at ~3. Each kind's own measured rate replaces its guess once a stage of it has run.
 */
export const stageWeights = { demonstrations: 1.5, sft: 0.12, dagger: 3, rl: 2.3, eval: 1 } as const

/**
 * The stages of a run in the order they run — the demonstrations, then per seed SFT, RL per estimator, the four
 * evaluated rows and the other paradigms (`perSeed`), or one stage per seed when seeds run on workers — sized in units.
 */
export const plannedStages = (options: PipelineOptions, perSeed: boolean): ReadonlyArray<Progress.PlannedStage & { readonly key: string }> => {
  const testTasks = options.testTasksPerLevel * options.levels.length
  const seedStages = (seed: number) => [
    { key: `sft/seed${seed}`, name: `SFT, seed ${seed}`, kind: "sft", units: options.trainTasks * options.sftEpochs, weight: stageWeights.sft },
    ...(options.daggerRounds > 0
      ? [{ key: `dagger/seed${seed}`, name: `DAgger, seed ${seed}`, kind: "dagger", units: options.daggerRounds * options.trainTasks, weight: stageWeights.dagger }]
      : []),
    ...options.estimators.map((e) => ({
      key: `rl/${e}/seed${seed}`,
      name: `RL to ${modelLabels[estimatorModel(e)]} (estimator ${e}), seed ${seed}`,
      kind: "rl",
      units: options.rlIterations * options.rlTasksPerIteration * options.group,
      weight: stageWeights.rl
    })),
    // each evaluated row: its greedy rollouts, then its sampled ones (when any)
    ...[...new Set([...models.slice(0, 2), ...options.estimators.map(estimatorModel)])].flatMap((m) => [
      {
        key: `eval/${m}/seed${seed}/ParaAct`,
        name: `evaluate ${modelLabels[m]} (greedy), seed ${seed}`,
        kind: "eval",
        units: testTasks * options.evalRollouts,
        weight: stageWeights.eval
      },
      ...(options.evalSampled > 0
        ? [{
          key: `eval/${m}/seed${seed}/ParaAct/sampled`,
          name: `evaluate ${modelLabels[m]} (sampled), seed ${seed}`,
          kind: "eval",
          units: testTasks * options.evalSampled,
          weight: stageWeights.eval
        }]
        : [])
    ]),
    { key: `eval/ceiling/seed${seed}/ParaAct`, name: `evaluate the ceiling, seed ${seed}`, kind: "eval", units: testTasks * options.evalRollouts, weight: stageWeights.eval },
    ...options.paradigms.filter((p) => p !== "ParaAct").map((p) => ({
      key: `eval/Ours/seed${seed}/${p}`,
      name: `evaluate ours under ${p}, seed ${seed}`,
      kind: "eval",
      units: testTasks * options.evalRollouts,
      weight: stageWeights.eval
    }))
  ]
  const demonstrations = { key: "demonstrations", name: "teacher demonstrations", kind: "demonstrations", units: options.trainTasks, weight: stageWeights.demonstrations }
  return [
    demonstrations,
    ...options.seeds.flatMap((seed) => {
      const stages = seedStages(seed)
      if (perSeed) return stages
      const units = stages.reduce((n, s) => n + s.units * s.weight, 0)
      return [{ key: `seed ${seed}`, name: `seed ${seed} (SFT, RL, evaluation on a worker)`, kind: "seed", units, weight: 1 }]
    })
  ]
}

export const planTracker = (options: PipelineOptions, perSeed: boolean): PlanTracker => {
  const stages = plannedStages(options, perSeed)
  const plan = Progress.plan(stages, options.progress)
  const index = (stage: string) => stages.findIndex((s) => s.key === stage)
  return {
    start: (stage, detail) => (index(stage) < 0 ? Effect.void : plan.start(index(stage), detail)),
    finish: (stage, restored) => (index(stage) < 0 ? Effect.void : plan.finish(index(stage), restored))
  }
}

/** A number for a metrics line: fixed decimals, "–" when not finite. */
const metric = (x: number | undefined, digits: number, scale = 1): string => (x === undefined || !Number.isFinite(x) ? "–" : (x * scale).toFixed(digits))

/** One stderr line per finished RL iteration: its training-split metrics as they land. */
export const announceIteration = (label: string, iterations: number) => (m: Trainer.IterationMetrics): Effect.Effect<void> =>
  Effect.sync(() => {
    process.stderr.write(
      `${label} · iteration ${m.iteration + 1}/${iterations} · R_ans ${metric(m.rAns, 3)} · Pass@1 ${metric(m.pass1, 1, 100)}% · rounds ${metric(m.rounds, 2)}` +
        ` · calls ${metric(m.calls, 2)} · KL ${metric(m.kl, 4)} · clip ${metric(m.clipFraction, 1, 100)}% · entropy ${metric(m.entropy, 3)} (training split)\n`
    )
  })

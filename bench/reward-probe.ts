/**
 * The reward probe: can an optimiser game the reward? On held-out generated tasks rolled out by the oracle teacher
 * (G rollouts each), every trajectory is rewritten by each strategy of src/judge/HackingStrategies.ts (its answer, and
 * for laundering its calls) and judged again (the share reaching R_ans 1.5, the mean R_ans), by class: the honest
 * answer, its legitimate forms (each must keep ≥ 0.8× the honest share), and the adversarial classes (each ≤ 0.05).
 * On the unmodified rollouts it prints the mean A_step per step kind and the truncation rate per paradigm.
 * `--split train` draws training-split tasks instead (thresholds are tuned there; the held-out numbers are reported).
 * Run: `npx tsx bench/reward-probe.ts [--tasks 25] [--group 2] [--seed 1] [--split test|train] [--show-failures] [--json]`.
 */
import { Effect } from "effect"
import { Flag } from "effect/cli"
import * as App from "../layers/App.ts"
import type { Paradigm, Trajectory } from "../src/domain/Trajectory.ts"
import * as ComparisonJob from "../src/eval/ComparisonJob.ts"
import * as RunConfig from "../src/eval/RunConfig.ts"
import * as Scoring from "../src/eval/Scoring.ts"
import * as HackingStrategies from "../src/judge/HackingStrategies.ts"
import { Judge } from "../src/judge/Judge.ts"
import * as Reward from "../src/math/Reward.ts"
import { mean } from "../src/math/Stats.ts"
import { stepKind } from "../src/math/StepKind.ts"
import { Rollout } from "../src/runtime/Rollout.ts"
import { TaskSource } from "../src/toolenv/TaskSource.ts"
import * as BenchFlags from "./BenchFlags.ts"

const flags = await BenchFlags.parse("reward-probe", "reward-hacking strategies, A_step by step kind and truncation, on oracle-teacher rollouts", {
  tasks: Flag.Int("tasks").pipe(Flag.withSchema(RunConfig.IntIn({ minimum: 1, maximum: 1_000 })), Flag.withDescription("held-out tasks per level (1–1000)"), Flag.withDefault(25)),
  group: Flag.Int("group").pipe(Flag.withSchema(RunConfig.IntIn({ minimum: 2, maximum: 16 })), Flag.withDescription("rollouts per task, G (2–16)"), Flag.withDefault(2)),
  seed: Flag.Int("seed").pipe(Flag.withSchema(RunConfig.IntIn({ minimum: 0, maximum: 2 ** 31 - 1 })), Flag.withDescription("seed of the task draw and rollouts"), Flag.withDefault(1)),
  split: Flag.Literals("split", ["test", "train"]).pipe(Flag.withDescription("test: held-out tasks and providers (reported); train: training tasks (for tuning)"), Flag.withDefault("test")),
  json: Flag.Boolean("json").pipe(Flag.withDescription("end with one JSON line"), Flag.withDefault(false)),
  showFailures: Flag.Boolean("show-failures").pipe(
    Flag.withDescription("print every adversarial rewrite that reached R_ans 1.5 and every legitimate one that did not, with the rationale"),
    Flag.withDefault(false)
  )
})

const paradigms: ReadonlyArray<Paradigm> = ["ParaAct", "ReAct", "ExploreThenExecute", "DFSDT"]

const program = Effect.gen(function*() {
  const started = performance.now()
  const source = yield* TaskSource
  const rollout = yield* Rollout
  const judge = yield* Judge
  // the same draw as the main job: tasks per level over I1–I3, held-out providers (or the training split, to tune on)
  const tasks = flags.split === "test"
    ? yield* ComparisonJob.drawTasks(source, { tasksPerLevel: flags.tasks, levels: ["I1", "I2", "I3"], seed: flags.seed })
    : yield* source.sample({ split: "train", count: flags.tasks * 3, levels: ["I1", "I2", "I3"], seed: flags.seed })
  const scored = new Map<Paradigm, Array<{ readonly task: (typeof tasks)[number]; readonly trajectory: Trajectory }>>()
  for (const paradigm of paradigms) {
    const rows: Array<{ readonly task: (typeof tasks)[number]; readonly trajectory: Trajectory }> = []
    for (const task of tasks) {
      const group = yield* rollout.runGroup(task, { paradigm, seed: flags.seed * 1_000, size: flags.group })
      for (const trajectory of yield* Scoring.scoreGroup(task, group)) rows.push({ task, trajectory })
    }
    scored.set(paradigm, rows)
  }

  // the strategies, on the ParaAct rollouts: each trajectory rewritten, judged again
  const para = scored.get("ParaAct") ?? []
  const strategies: Record<string, { cls: string; top: number; rAns: number; applied: number; answers: boolean }> = {}
  for (const strategy of HackingStrategies.strategies) {
    const rAns: Array<number> = []
    let top = 0
    for (const { task, trajectory } of para) {
      const rewritten = strategy.rewrite(task, trajectory)
      if (rewritten === undefined) continue
      const verdict = yield* judge.judge(task, rewritten).pipe(Effect.option)
      if (verdict._tag === "None") continue
      const reward = Reward.answerReward(verdict.value)
      rAns.push(reward.rAns)
      if (reward.pattern === "111") top++
      if (flags.showFailures && (strategy.answers ? reward.pattern !== "111" && strategy.class === "legitimate" : reward.pattern === "111")) {
        console.log(`[${strategy.name}] ${task.id} ${reward.pattern}\n  answer: ${JSON.stringify(rewritten.answer ?? "").slice(0, 600)}\n  rationale: ${verdict.value.rationale ?? ""}`)
      }
    }
    strategies[strategy.name] = { cls: strategy.class, top: rAns.length === 0 ? 0 : top / rAns.length, rAns: mean(rAns), applied: rAns.length, answers: strategy.answers }
  }

  // A_step by step kind, over every scored rollout of every paradigm
  const byKind: Record<"search" | "call" | "answer", Array<number>> = { search: [], call: [], answer: [] }
  for (const rows of scored.values()) {
    for (const { trajectory } of rows) {
      for (const step of trajectory.steps) {
        const kind = stepKind(step)
        if (kind !== "other" && step.advantage !== undefined) byKind[kind].push(step.advantage.step)
      }
    }
  }
  const aStepByKind = { search: mean(byKind.search), call: mean(byKind.call), answer: mean(byKind.answer) }
  const truncation: Record<string, number> = {}
  for (const [paradigm, rows] of scored) truncation[paradigm] = mean(rows.map((r) => Number(r.trajectory.stop === "max_rounds")))

  const f = (x: number, d = 3) => (Number.isFinite(x) ? (Math.abs(x) < 5e-4 ? 0 : x).toFixed(d) : "–")
  console.log(`${tasks.length} ${flags.split === "test" ? "held-out" : "training"} tasks (${flags.tasks} per level) × G = ${flags.group}, oracle teacher, rule judge, seed ${flags.seed}`)
  console.log("strategy (ParaAct trajectories rewritten)   class             top (R_ans 1.5)   mean R_ans   judged")
  for (const [name, st] of Object.entries(strategies)) {
    console.log(`${name.padEnd(40)} ${st.cls.padEnd(16)} ${f(st.top).padStart(16)} ${f(st.rAns).padStart(12)} ${String(st.applied).padStart(8)}`)
  }
  const honestTop = strategies["honest"]?.top ?? 0
  const cheats = Object.entries(strategies).filter(([, st]) => !st.answers)
  const worst = cheats.reduce((w, [name, st]) => (st.top > w.top ? { name, top: st.top } : w), { name: "none", top: 0 })
  const legit = Object.entries(strategies).filter(([, st]) => st.cls === "legitimate")
  const weakest = legit.reduce((w, [name, st]) => (st.top < w.top ? { name, top: st.top } : w), { name: "none", top: Infinity })
  console.log(`worst adversarial strategy: ${worst.name} top ${f(worst.top)} (target ≤ 0.05); honest top: ${f(honestTop)} (target ≥ 0.8)`)
  console.log(`weakest legitimate form: ${weakest.name} top ${f(weakest.top)} = ${f(honestTop === 0 ? 0 : weakest.top / honestTop, 2)}× honest (target ≥ 0.8×)`)
  console.log(`mean A_step by kind: search ${f(aStepByKind.search)} (${byKind.search.length}), call ${f(aStepByKind.call)} (${byKind.call.length}), answer ${f(aStepByKind.answer)} (${byKind.answer.length}) (target within ±0.1)`)
  console.log(`truncation rate: ${Object.entries(truncation).map(([p, t]) => `${p} ${f(t)}`).join(", ")}`)
  console.log(`wall ${((performance.now() - started) / 1000).toFixed(1)} s`)
  if (flags.json) {
    const compact = Object.fromEntries(Object.entries(strategies).map(([name, st]) => [name, { class: st.cls, top: st.top, rAns: st.rAns, n: st.applied }]))
    console.log(JSON.stringify({ split: flags.split, strategies: compact, worstAdversarial: worst, weakestLegitimate: { ...weakest, ratio: honestTop === 0 ? 0 : weakest.top / honestTop }, aStepByKind, truncation }))
  }
})

Effect.runPromise(program.pipe(Effect.provide(App.layer({ tasks: { holdoutTools: true } })), Effect.orDie)).catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : String(e))
  process.exitCode = 1
})

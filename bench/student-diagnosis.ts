/**
 * Where the student (SFT + DAgger, greedy) loses to the student-space oracle it imitates, on the **validation** split:
 * both rolled out on the same tasks with the same environment seeds; every state the student visits labelled with
 * the oracle's choice in the student's own space (DAgger's labels); per decision kind how often the student's greedy
 * turn differs from the label (the kind; given the label's kind, its candidates; the facts an answer states or
 * misses), the same teacher-forced on fresh training-split rollouts, and for every rollout the oracle solves and the
 * student fails, the first state whose greedy turn the oracle does not accept (the divergence that loses the episode).
 * `--counterfactual kind,search,call,answer,explore,candidates` rolls out hybrids: the student with the oracle deciding one
 * decision (explore: its searches and calls, the student's own answers).
 * `--weights <file>` reuses a student saved by an earlier run (`--save <file>`), skipping SFT and DAgger.
 * `--subset-thresholds 0.3/0.5,0.3/0.3` rolls it out with a search turn's queries and a call turn's calls kept down to
 * each pair of thresholds (answers at the evaluation's), paired against 0.5/0.5. `--answer-quotas 0` rolls it out as
 * the pipeline's evaluation decodes and says why each failed rollout failed (no answer, a gold fact never observed,
 * observed but not stated, every fact stated but not to the point — naming the judge's failed checks); `--traces 20`
 * prints the first 20 rollouts that never observed a gold fact, turn by turn, beside the gold calls.
 * Run: `npx tsx bench/student-diagnosis.ts [--seed 1] [--tasks 90] [--rollouts 2] [--dagger 3] [--save f] [--weights f]`.
 */
import { Effect, Layer, Option, Ref } from "effect"
import * as fs from "node:fs"
import { Flag } from "effect/cli"
import * as BenchFlags from "./BenchFlags.ts"
import * as App from "../layers/App.ts"
import type { Task } from "../src/domain/Task.ts"
import type { Trajectory } from "../src/domain/Trajectory.ts"
import * as LearnedPolicy from "../src/agent/LearnedPolicy.ts"
import * as StudentOracle from "../src/agent/StudentOracle.ts"
import * as ActionSpace from "../src/agent/ActionSpace.ts"
import { Policy } from "../src/agent/Policy.ts"
import type { PolicyContext, PolicyOutput } from "../src/agent/Policy.ts"
import * as Teacher from "../src/agent/Teacher.ts"
import * as ParaAct from "../src/protocol/ParaAct.ts"
import * as RunConfig from "../src/eval/RunConfig.ts"
import * as Scoring from "../src/eval/Scoring.ts"
import * as Acceptable from "../src/math/Acceptable.ts"
import * as Evaluation from "../src/math/Evaluation.ts"
import * as Responsiveness from "../src/judge/Responsiveness.ts"
import * as Reward from "../src/math/Reward.ts"
import { hashParts } from "../src/math/Random.ts"
import * as SetScorer from "../src/math/SetScorer.ts"
import * as Stats from "../src/math/Stats.ts"
import * as TurnDistribution from "../src/math/TurnDistribution.ts"
import { Retriever } from "../src/retrieval/Retriever.ts"
import * as Rollout from "../src/runtime/Rollout.ts"
import { TaskSource } from "../src/toolenv/TaskSource.ts"
import { ToolLibrary } from "../src/toolenv/ToolLibrary.ts"
import { GeneratedWorld } from "../src/toolenv/world/World.ts"
import * as Dagger from "../src/training/Dagger.ts"
import * as Pipeline from "../src/training/Pipeline.ts"
import * as Trainer from "../src/training/Trainer.ts"

const flags = await BenchFlags.parse("student-diagnosis", "where the DAgger student's greedy turns differ from the oracle's labels (validation split)", {
  seed: Flag.Int("seed").pipe(Flag.withSchema(RunConfig.IntIn({ minimum: 0, maximum: 1_000_000 })), Flag.withDescription("training seed"), Flag.withDefault(1)),
  tasks: Flag.Int("tasks").pipe(Flag.withSchema(RunConfig.IntIn({ minimum: 3, maximum: 3000 })), Flag.withDescription("validation tasks (levels round-robin)"), Flag.withDefault(90)),
  rollouts: Flag.Int("rollouts").pipe(Flag.withSchema(RunConfig.IntIn({ minimum: 1, maximum: 16 })), Flag.withDescription("greedy rollouts per task"), Flag.withDefault(Pipeline.defaults.evalRollouts)),
  daggerEpochs: Flag.Int("dagger-epochs").pipe(Flag.withSchema(RunConfig.IntIn({ minimum: 1, maximum: 200 })), Flag.withDescription("DAgger's passes over the aggregate per round"), Flag.withDefault(Dagger.defaultDagger.epochs)),
  daggerLr: Flag.Finite("dagger-lr").pipe(Flag.withDescription("DAgger's Adam learning rate"), Flag.withDefault(Dagger.defaultDagger.adam.lr)),
  searchLabels: Flag.Literals("search-labels", ["cover", "every"]).pipe(Flag.withDescription("which searches DAgger's oracle labels take: a greedy cover, or every query that finds a needed tool"), Flag.withDefault(Dagger.defaultDagger.searchLabels)),
  factLabels: Flag.Literals("fact-labels", ["answer", "every"]).pipe(Flag.withDescription("where DAgger teaches the answer's facts: at the oracle's answers, or at every state with a gold fact on offer"), Flag.withDefault(Dagger.defaultDagger.factLabels)),
  label: Flag.Literals("label", ["exact", "set", "matched"]).pipe(Flag.withDescription("what DAgger's clone imitates: the oracle's one pick, its acceptable set, or its pick per need matched to the student's favourite"), Flag.withDefault(Dagger.defaultDagger.label)),
  dagger: Flag.Int("dagger").pipe(Flag.withSchema(RunConfig.IntIn({ minimum: 0, maximum: 20 })), Flag.withDescription("DAgger rounds after SFT"), Flag.withDefault(Pipeline.defaults.daggerRounds)),
  trainTasks: Flag.Int("train-tasks").pipe(Flag.withSchema(RunConfig.IntIn({ minimum: 0, maximum: 3000 })), Flag.withDescription("training tasks the student is rolled out on for the teacher-forced training-split numbers"), Flag.withDefault(80)),
  save: Flag.String("save").pipe(Flag.withDescription("write the trained student's weights here (JSON)"), Flag.optional),
  weights: Flag.String("weights").pipe(Flag.withDescription("read the student's weights from here instead of training (a --save file)"), Flag.optional),
  thresholds: Flag.String("answer-thresholds").pipe(
    Flag.withDescription("also roll the student out with greedy decoding stating every fact above these probabilities (comma-separated, in (0, 1)), paired against ½"),
    Flag.withDefault("0.3,0.2,0.15,0.1")
  ),
  subsetThresholds: Flag.String("subset-thresholds").pipe(
    Flag.withDescription("also roll the student out greedily with a search turn's queries and a call turn's calls kept down to these probabilities: comma-separated <search>/<call> pairs in (0, 1), e.g. 0.3/0.5 (answers at the evaluation's threshold), each paired against 0.5/0.5"),
    Flag.withDefault("")
  ),
  covers: Flag.String("answer-covers").pipe(
    Flag.withDescription("also roll the student out greedily (answers above the evaluation's threshold) with every uncovered clause's best fact added above these floors (comma-separated, in [0, 1)), paired against no cover"),
    Flag.withDefault("")
  ),
  quotas: Flag.String("answer-quotas").pipe(
    Flag.withDescription("also roll the student out greedily (answers above the evaluation's threshold with its clause cover) with every clause's quota of values filled above these floors (comma-separated, in [0, 1)), paired against the cover alone"),
    Flag.withDefault("")
  ),
  traces: Flag.Int("traces").pipe(Flag.withSchema(RunConfig.IntIn({ minimum: 0, maximum: 1000 })), Flag.withDescription("print this many rollouts of the first --answer-quotas row that never observed a gold fact, turn by turn, beside the gold calls"), Flag.withDefault(0)),
  records: Flag.Boolean("answer-records").pipe(Flag.withDescription("the --answer-quotas rows also keep each list's facts to the records their clause asks about (LearnedPolicy.keepAskedRecords, as the pipeline's evaluation), and a last row is the first quota without that bound"), Flag.withDefault(LearnedPolicy.evalAnswerRecords)),
  forced: Flag.String("forced-thresholds").pipe(Flag.withDescription("teacher-forced answer-fact numbers at these thresholds (comma-separated)"), Flag.withDefault("0.5,0.4,0.3,0.25,0.2,0.15,0.1")),
  outcomesFile: Flag.String("outcomes").pipe(Flag.withDescription("write per-task success rates of each evaluated variant here (JSON)"), Flag.optional),
  forcedAnswers: Flag.Literals("forced-answers", ["kind", "first"]).pipe(Flag.withDescription("what DAgger's exact labels teach where the oracle has no gold fact to state: the kind only, or its placeholder first fact"), Flag.withDefault(Dagger.defaultDagger.forcedAnswers)),
  baseline: Flag.String("baseline").pipe(Flag.withDescription("an --outcomes file of an earlier run on the same tasks and seed: its rows are added as before-<row> (for --pool)"), Flag.optional),
  poolBase: Flag.String("pool-base").pipe(Flag.withDescription("the row --pool subtracts"), Flag.withDefault("student")),
  pool: Flag.String("pool").pipe(Flag.withDescription("only pool --outcomes files of several seeds (comma-separated): every variant against the student, paired over (seed, task), bootstrap 95% CI; then exit"), Flag.withDefault("")),
  examples: Flag.Int("examples").pipe(Flag.withSchema(RunConfig.IntIn({ minimum: 0, maximum: 1000 })), Flag.withDescription("print this many answer steps whose facts differ from the gold facts among the candidates"), Flag.withDefault(0)),
  searchKinds: Flag.Boolean("search-kinds").pipe(Flag.withDescription("at the student's own states whose label searches: the queries of each kind (the clause, a phrase, an entity hop, a next page, …) the label and the student's greedy turn take"), Flag.withDefault(false)),
  jointKind: Flag.Finite("joint-kind").pipe(Flag.withDescription("with --hybrid-decoding eval, the hybrids' own kind decisions weigh the search and call kinds by their best candidate (LearnedPolicy.jointKind)"), Flag.withDefault(0)),
  hybridDecoding: Flag.Literals("hybrid-decoding", ["half", "eval"]).pipe(
    Flag.withDescription("how the hybrids decode what the oracle does not decide: the most probable turn (half), or as the pipeline's evaluation (answer threshold, clause cover and quota, records bound); the hybrid 'none' is then the student so decoded"),
    Flag.withDefault("half")
  ),
  counterfactual: Flag.String("counterfactual").pipe(
    Flag.withDescription("hybrids to roll out, comma-separated: the student with the oracle deciding one decision (kind, search, call, answer, explore = search+call, or candidates = search+call+answer; with --hybrid-decoding eval also none: no oracle, and the oracle's kind only where it answers (kind-stop), where the student would answer and it goes on (kind-go-on), or where both go on (kind-search-call)); empty: none"),
    Flag.withDefault("kind,search,call,answer,candidates")
  )
})

const options = Pipeline.defaults

// the hybrids asked for, checked before any work
const kindHybrids = ["kind", "kind-stop", "kind-go-on", "kind-search-call"]
const hybridModes = flags.counterfactual.split(",").map((m) => m.trim()).filter((m) => m !== "")
{
  const known = ["search", "call", "answer", "explore", "candidates", "none", ...kindHybrids]
  const unknown = hybridModes.filter((m) => !known.includes(m))
  if (unknown.length > 0) {
    console.error(`bench/student-diagnosis --counterfactual: unknown hybrid ${unknown.join(", ")}; known: ${known.join(", ")}`)
    process.exit(1)
  }
  if (flags.hybridDecoding !== "eval" && hybridModes.some((m) => m.startsWith("kind-"))) {
    console.error("bench/student-diagnosis --counterfactual: kind-stop, kind-go-on and kind-search-call need --hybrid-decoding eval")
    process.exit(1)
  }
}

if (flags.pool !== "") {
  const files = flags.pool.split(",").map((f) => JSON.parse(fs.readFileSync(f.trim(), "utf8")) as { seed: number; tasks: ReadonlyArray<string>; outcomes: Record<string, ReadonlyArray<number>> })
  const first = files[0]
  if (first === undefined || files.some((f) => f.tasks.join() !== first.tasks.join())) {
    console.error("bench/student-diagnosis --pool: the files hold different validation tasks: not paired")
    process.exit(1)
  }
  const base = flags.poolBase
  const variants = Object.keys(first.outcomes).filter((v) => v !== base && files.every((f) => f.outcomes[v] !== undefined))
  console.log(`pooled over seeds ${files.map((f) => f.seed).join(", ")}, ${first.tasks.length} tasks each: ${base} ${(100 * Stats.mean(files.flatMap((f) => f.outcomes[base] ?? []))).toFixed(1)}%`)
  for (const v of variants) {
    const diffs = files.map((f) => (f.outcomes[v] ?? []).map((x, i) => 100 * (x - ((f.outcomes[base] ?? [])[i] ?? NaN))))
    console.log(`  ${v.padEnd(18)} ${(100 * Stats.mean(files.flatMap((f) => f.outcomes[v] ?? []))).toFixed(1)}%  − ${base} ${Pipeline.formatPaired(Stats.pairedBootstrap(diffs, { seed: 1 }))}`)
  }
  process.exit(0)
}
const cell = Ref.makeUnsafe(LearnedPolicy.initial(flags.seed))
const app = App.layer({ tasks: { holdoutTools: true }, policy: { kind: "learned", weights: cell } })

type Kind = "search" | "call" | "answer"
const kindNames: ReadonlyArray<Kind> = ["search", "call", "answer"]

/** Per label kind: states, greedy kind = label kind, candidates exact given the label's kind, greedy turn acceptable, and the confusions. */
interface KindStats {
  n: number
  kindRight: number
  candExact: number
  acceptable: number
  /** label kind → greedy kind counts. */
  confusedWith: Record<string, number>
  /** label rows chosen by the greedy candidates (given the label's kind), label rows in all, greedy rows in all. */
  hit: number
  labelRows: number
  greedyRows: number
  /** Given the label's kind: the greedy candidates hold none of the label's rows. */
  noneRight: number
}
const emptyStats = (): Record<Kind, KindStats> =>
  Object.fromEntries(kindNames.map((k) => [k, { n: 0, kindRight: 0, candExact: 0, acceptable: 0, confusedWith: {}, hit: 0, labelRows: 0, greedyRows: 0, noneRight: 0 }])) as unknown as Record<Kind, KindStats>

/** The greedy candidates of one kind (as `TurnDistribution.greedy` picks them once that kind is chosen). */
const greedyWithin = (layout: TurnDistribution.Layout, logits: Float64Array, kind: number): ReadonlyArray<number> => {
  const slot = layout.kinds[kind] as TurnDistribution.KindSlot
  if (slot.mode === "none") return []
  const rows = Array.from({ length: slot.end - slot.start }, (_, i) => slot.start + i)
  if (slot.mode === "one") return [rows.reduce((b, r) => ((logits[r] as number) > (logits[b] as number) ? r : b), slot.start)]
  const positive = rows.filter((r) => (logits[r] as number) > 0)
  return positive.length > 0 ? positive : [rows.reduce((b, r) => ((logits[r] as number) > (logits[b] as number) ? r : b), slot.start)]
}

/** Teacher-forced statistics of a policy on labelled states. */
const tally = (params: SetScorer.Params, states: ReadonlyArray<Dagger.Labelled>): Record<Kind, KindStats> => {
  const out = emptyStats()
  for (const s of states) {
    const logits = SetScorer.logits(params, s.x, s.layout.rows, s.layout.sets)
    const g = TurnDistribution.greedy(s.layout, logits)
    const lk = s.kinds[s.choice.kind] as Kind
    const st = out[lk]
    st.n++
    if (g.kind === s.choice.kind) st.kindRight++
    else {
      const gk = s.kinds[g.kind] as string
      st.confusedWith[gk] = (st.confusedWith[gk] ?? 0) + 1
    }
    const within = greedyWithin(s.layout, logits, s.choice.kind)
    const label = new Set(s.choice.selected)
    if (within.length === label.size && within.every((r) => label.has(r))) st.candExact++
    const hit = within.filter((r) => label.has(r)).length
    st.hit += hit
    st.labelRows += label.size
    st.greedyRows += within.length
    if (hit === 0 && label.size > 0) st.noneRight++
    if (Acceptable.accepts(s.layout, s.acceptable ?? Acceptable.exactly(s.layout, s.choice), g)) st.acceptable++
  }
  return out
}

/** What kind of query a search row is, read off its search columns (`actions/Searches.ts`). */
const searchType = (x: Float64Array, row: number): string => {
  const f = (j: number) => x[row * ActionSpace.width + ActionSpace.candidateOffset + j] as number
  if (f(13) > 0) return "a query's next page"
  if (f(9) > 0) return "an entity hop"
  if (f(10) > 0) return "a provider's endpoints"
  if (f(14) > 0) return "<noun> by name"
  if (f(8) > 0) return "a phrase of the clause"
  if (f(5) > 0) return "a missing input"
  if (f(7) > 0) return "the clause with its quotes"
  return "the clause"
}

/**
 * At the states whose label searches: per kind of query, the queries the label takes, the queries the student's greedy
 * search turn takes there, and those both take; and the same split of the round-0 states alone.
 */
const searchTypes = (params: SetScorer.Params, states: ReadonlyArray<Dagger.Labelled>): void => {
  for (const first of [false, true]) {
    const rows = new Map<string, { label: number; greedy: number; both: number }>()
    let n = 0
    for (const s of states) {
      if (s.kinds[s.choice.kind] !== "search") continue
      // no clause searched yet: every search row's first column (its clause searched, /2) is 0
      const slot = s.layout.kinds[s.choice.kind] as TurnDistribution.KindSlot
      const fresh = Array.from({ length: slot.end - slot.start }, (_, i) => slot.start + i)
        .every((r) => (s.x[r * ActionSpace.width + ActionSpace.candidateOffset] as number) === 0)
      if (first && !fresh) continue
      n++
      const logits = SetScorer.logits(params, s.x, s.layout.rows, s.layout.sets)
      const within = new Set(greedyWithin(s.layout, logits, s.choice.kind))
      const label = new Set(s.choice.selected)
      for (let r = slot.start; r < slot.end; r++) {
        if (!within.has(r) && !label.has(r)) continue
        const t = searchType(s.x, r)
        const e = rows.get(t) ?? { label: 0, greedy: 0, both: 0 }
        if (label.has(r)) e.label++
        if (within.has(r)) e.greedy++
        if (label.has(r) && within.has(r)) e.both++
        rows.set(t, e)
      }
    }
    console.log(`${first ? "  of them with no clause searched yet" : "queries at the states whose label searches"} (${n} states): kind of query — the label's / the student's / both`)
    for (const [t, e] of [...rows].sort((a, b) => b[1].label - a[1].label)) console.log(`    ${t.padEnd(28)} ${String(e.label).padStart(5)} ${String(e.greedy).padStart(5)} ${String(e.both).padStart(5)}`)
  }
}

const pct = (a: number, b: number) => (b === 0 ? "-" : `${(100 * a / b).toFixed(1)}%`)
const print = (title: string, stats: Record<Kind, KindStats>) => {
  const total = kindNames.reduce((s, k) => s + stats[k].n, 0)
  console.log(`${title} (${total} states):`)
  for (const k of kindNames) {
    const s = stats[k]
    const conf = Object.entries(s.confusedWith).map(([c, n]) => `${c} ${n}`).join(", ")
    console.log(`  label ${k.padEnd(6)} ${String(s.n).padStart(5)} states: greedy kind right ${pct(s.kindRight, s.n)} (wrong: ${conf || "-"}); ` +
      `given the kind, candidates exact ${pct(s.candExact, s.n)}, none of the label's ${pct(s.noneRight, s.n)}, recall ${pct(s.hit, s.labelRows)}, precision ${pct(s.hit, s.greedyRows)} ` +
      `(label ${(s.labelRows / Math.max(1, s.n)).toFixed(2)} rows/state, greedy ${(s.greedyRows / Math.max(1, s.n)).toFixed(2)}); greedy turn acceptable ${pct(s.acceptable, s.n)}`)
  }
}

const program = Effect.gen(function*() {
  const source = yield* TaskSource
  const library = yield* ToolLibrary
  const retriever = yield* Retriever
  const world = yield* GeneratedWorld
  const equivalence = StudentOracle.worldEquivalence(world.ops)
  const maxRounds = Rollout.defaultConfig.maxRounds
  const trainTasks = yield* source.sample({ split: "train", count: options.trainTasks, levels: options.levels, seed: options.taskSeed })
  const validation = yield* source.sample({ split: "validation", count: flags.tasks, levels: options.levels, seed: options.taskSeed })
  const greedy = yield* Rollout.make({}).pipe(Effect.provide(LearnedPolicy.layer(cell, { decoding: "greedy" })))
  const oracle = yield* Rollout.make({}).pipe(
    Effect.provide(Layer.merge(Layer.succeed(ToolLibrary, library), StudentOracle.layer(equivalence).pipe(
      Layer.provide(Layer.merge(Layer.succeed(Retriever, retriever), Layer.succeed(ToolLibrary, library)))
    )))
  )
  const scoring: Scoring.ScoringOptions = { reward: Reward.defaultRewardConfig, estimator: "grpo" }
  const scored = (rollout: Rollout.RolloutService, tasks: ReadonlyArray<Task>, salt: string, size: number) =>
    Effect.forEach(tasks, (task) =>
      Effect.flatMap(rollout.runGroup(task, { paradigm: "ParaAct", seed: hashParts(0, salt, task.id) & 0x3fffffff, size }), (g) => Scoring.scoreGroup(task, g, scoring)), { concurrency: 8 })

  if (Option.isSome(flags.weights)) {
    const saved = JSON.parse(fs.readFileSync(flags.weights.value, "utf8")) as { shape: SetScorer.Shape; data: ReadonlyArray<number>; version: number }
    yield* Ref.set(cell, { params: { shape: saved.shape, data: Float64Array.from(saved.data) }, version: saved.version })
    console.log(`student read from ${flags.weights.value}`)
  } else {
    const teacher = yield* Rollout.make({}).pipe(
      Effect.provide(Layer.merge(Layer.succeed(ToolLibrary, library), Teacher.layer({ mistakeRate: options.teacherMistakeRate, firstQuery: options.teacherFirstQuery })))
    )
    const demos = (yield* scored(teacher, trainTasks, "demo", 1)).map((g, i) => ({ task: trainTasks[i] as Task, trajectory: g[0] as Trajectory }))
    const trainer = yield* Trainer.make.pipe(Effect.provide(Layer.succeed(Trainer.WeightsCell, cell)))
    const sft = yield* trainer.sft(demos, { epochs: options.sftEpochs, seed: flags.seed })
    console.log(`SFT on ${sft.steps} demonstration steps`)
    if (flags.dagger > 0) {
      const report = yield* Dagger.run(trainTasks, demos, { rounds: flags.dagger, seed: flags.seed, equivalent: equivalence, forcedAnswers: flags.forcedAnswers, searchLabels: flags.searchLabels, label: flags.label, factLabels: flags.factLabels, epochs: flags.daggerEpochs, adam: { ...Dagger.defaultDagger.adam, lr: flags.daggerLr } }).pipe(Effect.provideService(Trainer.WeightsCell, cell))
      console.log(`DAgger ${report.rounds.map((r) => `round ${r.round}: ${r.labelled} labelled, aggregate ${r.aggregate}, NLL ${r.lossLast.toFixed(3)}`).join("; ")}`)
    }
    if (Option.isSome(flags.save)) {
      const w = yield* Ref.get(cell)
      fs.writeFileSync(flags.save.value, JSON.stringify({ shape: w.params.shape, data: [...w.params.data], version: w.version }))
    }
  }
  const student = yield* Ref.get(cell)

  // the same tasks and environment seeds for both
  const s = yield* scored(greedy, validation, `val-${flags.seed}`, flags.rollouts)
  const o = yield* scored(oracle, validation, `val-${flags.seed}`, flags.rollouts)
  const ok = (groups: ReadonlyArray<ReadonlyArray<Trajectory>>) => groups.map((g, i) => g.map((t) => Evaluation.outcomeOf(validation[i] as Task, t).success))
  const sOk = ok(s)
  const oOk = ok(o)
  const count = (xs: ReadonlyArray<ReadonlyArray<boolean>>) => xs.flat().filter((x) => x).length
  /** Per task, the share of its rollouts solved (what --outcomes stores per row). */
  const rates = (xs: ReadonlyArray<ReadonlyArray<boolean>>) => xs.map((g) => g.filter((x) => x).length / g.length)
  const outcomeRows: Record<string, ReadonlyArray<number>> = { student: rates(sOk), oracle: rates(oOk) }
  const record = (row: string, xs: ReadonlyArray<ReadonlyArray<boolean>>) => {
    if (Option.isSome(flags.outcomesFile)) outcomeRows[row] = rates(xs)
  }
  if (Option.isSome(flags.baseline)) {
    const before = JSON.parse(fs.readFileSync(flags.baseline.value, "utf8")) as { tasks: ReadonlyArray<string>; outcomes: Record<string, ReadonlyArray<number>> }
    if (before.tasks.join() !== validation.map((t) => t.id).join()) return yield* Effect.die(new Error(`--baseline ${flags.baseline.value}: other validation tasks`))
    for (const [k, v] of Object.entries(before.outcomes)) outcomeRows[`before-${k}`] = v
  }
  const n = validation.length * flags.rollouts
  const share = (xs: ReadonlyArray<ReadonlyArray<boolean>>) => `${count(xs)}/${n} (${(100 * count(xs) / n).toFixed(1)}%)`
  /** A variant's successes minus a base's over the same tasks and rollouts, in points: mean [bootstrap 95% CI]. */
  const versus = (xs: ReadonlyArray<ReadonlyArray<boolean>>, base: ReadonlyArray<ReadonlyArray<boolean>>) =>
    Pipeline.formatPaired(Stats.pairedBootstrap([xs.map((g, i) => 100 * (g.filter((x) => x).length - (base[i] ?? []).filter((x) => x).length) / g.length)], { seed: 1 }))
  /** The student rolled out greedily on the validation tasks under other decoding options, scored. */
  const greedyWith = (options: LearnedPolicy.LearnedPolicyOptions) =>
    Effect.gen(function*() {
      const rollout = yield* Rollout.make({}).pipe(Effect.provide(LearnedPolicy.layer(cell, { decoding: "greedy", ...options })))
      return yield* scored(rollout, validation, `val-${flags.seed}`, flags.rollouts)
    })
  const both = sOk.flatMap((g, i) => g.map((x, j) => x && (oOk[i]?.[j] ?? false))).filter((x) => x).length
  console.log(`validation, seed ${flags.seed}, ${validation.length} tasks × ${flags.rollouts} rollouts: student ${count(sOk)}/${n}, oracle ${count(oOk)}/${n}, both ${both}; ` +
    `student rounds ${(s.flat().reduce((a, t) => a + t.steps.length, 0) / n).toFixed(2)}, oracle ${(o.flat().reduce((a, t) => a + t.steps.length, 0) / n).toFixed(2)}`)

  // label every state the student visited on validation (the oracle's choice in the student's own space)
  const byId = new Map(validation.map((t) => [t.id as string, t]))
  const cache = StudentOracle.lookaheadCache()
  const world2: StudentOracle.OracleWorld = { lookup: (name) => library.get(name), equivalent: equivalence }
  const perTrajectory: Array<{ readonly task: number; readonly rollout: number; readonly states: ReadonlyArray<Dagger.Labelled>; readonly reasons: ReadonlyArray<string> }> = []
  for (let i = 0; i < s.length; i++) {
    for (let j = 0; j < (s[i]?.length ?? 0); j++) {
      const t = s[i]?.[j] as Trajectory
      const task = byId.get(t.taskId) as Task
      const states: Array<Dagger.Labelled> = []
      const reasons: Array<string> = []
      for (let index = 0; index < t.steps.length; index++) {
        const context = LearnedPolicy.contextAt(t, index, task.request, maxRounds, world2.lookup)
        const l = yield* StudentOracle.label(context, task, world2, undefined, cache)
        states.push({ x: l.space.features, layout: l.space.layout, choice: l.choice, acceptable: l.acceptable, source: "oracle", kinds: l.space.kinds })
        reasons.push(l.reason)
      }
      perTrajectory.push({ task: i, rollout: j, states, reasons })
    }
  }
  const validationStates = perTrajectory.flatMap((p) => p.states)
  print("validation, on the student's own states (greedy vs the oracle's label)", tally(student.params, validationStates))
  if (flags.searchKinds) searchTypes(student.params, validationStates)

  // the first divergence of every rollout the oracle solves and the student does not
  const firsts = new Map<string, number>()
  let lost = 0
  let never = 0
  for (const p of perTrajectory) {
    if (sOk[p.task]?.[p.rollout] === true || oOk[p.task]?.[p.rollout] !== true) continue
    lost++
    const k = p.states.findIndex((st) => {
      const logits = SetScorer.logits(student.params, st.x, st.layout.rows, st.layout.sets)
      return !Acceptable.accepts(st.layout, st.acceptable ?? Acceptable.exactly(st.layout, st.choice), TurnDistribution.greedy(st.layout, logits))
    })
    if (k < 0) {
      never++
      continue
    }
    const st = p.states[k] as Dagger.Labelled
    const logits = SetScorer.logits(student.params, st.x, st.layout.rows, st.layout.sets)
    const g = TurnDistribution.greedy(st.layout, logits)
    const lk = st.kinds[st.choice.kind] as Kind
    const gk = st.kinds[g.kind] as Kind
    let what: string
    if (lk !== gk) what = `label ${lk} (${p.reasons[k]}), student ${gk}`
    else {
      const label = new Set(st.choice.selected)
      const hit = g.selected.filter((r) => label.has(r)).length
      what = `label ${lk}, student ${gk}: ${hit === 0 ? "none of the label's candidates" : hit < label.size ? "some of the label's candidates missing" : "the label's and extra candidates"}${hit === label.size && g.selected.length === label.size ? " (plan bit)" : ""}`
    }
    const key = `${what}; round ${k < 2 ? String(k) : "2+"}`
    firsts.set(key, (firsts.get(key) ?? 0) + 1)
  }
  console.log(`rollouts the oracle solves and the student fails: ${lost} (${never} with no divergence the oracle rejects)`)
  console.log("their first divergence:")
  for (const [k, c] of [...firsts].sort((a, b) => b[1] - a[1])) console.log(`  ${String(c).padStart(4)}  ${k}`)

  /** The fact rows stating a gold fact (the oracle's answer rule, whatever the oracle would do this round). */
  const goldFactsOf = (space: ActionSpace.Space, context: PolicyContext, task: Task): ReadonlyArray<number> => StudentOracle.goldFacts(space, context, task, world2).rows
  // answers whose facts differ from the gold facts on offer: what the student stated and what it should have
  const showExamples = (groups: ReadonlyArray<ReadonlyArray<Trajectory>>, limit: number, failedOnly: boolean) => {
    let shown = 0
    for (let i = 0; i < groups.length && shown < limit; i++) {
      for (const t of groups[i] ?? []) {
        const task = byId.get(t.taskId) as Task
        const index = t.steps.findIndex((st) => st.turn?.answer !== undefined)
        if (index < 0 || shown >= limit || (failedOnly && Evaluation.outcomeOf(task, t).success)) continue
        const context = LearnedPolicy.contextAt(t, index, task.request, maxRounds, world2.lookup)
        const space = ActionSpace.build({ ...context })
        const gold = goldFactsOf(space, context, task)
        const chosen = (t.steps[index]?.decision?.selected ?? [])
        if (gold.length === 0 || (gold.length === chosen.length && gold.every((r) => chosen.includes(r)))) continue
        shown++
        const slot = space.layout.kinds[space.kinds.indexOf("answer")] as TurnDistribution.KindSlot
        const logits = SetScorer.logits(student.params, space.features, space.layout.rows, space.layout.sets)
        const show = (r: number) => { const f = space.facts[r - slot.start]; return `[c${f?.clause}] ${f?.label}: ${String(f?.value).slice(0, 40)} (${(logits[r] as number).toFixed(2)})` }
        console.log(`--- ${task.level} "${task.request}"\n  stated: ${chosen.map(show).join(" | ")}\n  gold:   ${gold.map(show).join(" | ")}\n  ${space.facts.length} facts; clauses: ${space.clauses.map((c, k) => `[c${k}] ${c}`).join(" ")}`)
      }
    }
  }
  showExamples(s, flags.examples, false)

  // the answer's facts at a lower probability threshold: teacher-forced on the validation labels, then rolled out
  const forcedAt = (threshold: number) => {
    let hit = 0
    let labelRows = 0
    let chosen = 0
    let exact = 0
    let answers = 0
    for (const st of validationStates) {
      if (st.kinds[st.choice.kind] !== "answer" || st.choice.selected.length === 0) continue
      const logits = SetScorer.logits(student.params, st.x, st.layout.rows, st.layout.sets)
      st.layout.kinds.forEach((k, i) => (logits[k.row] = i === st.choice.kind ? 50 : -50))
      const pick = TurnDistribution.greedyAbove(st.layout, logits, threshold)
      const label = new Set(st.choice.selected)
      answers++
      hit += pick.selected.filter((x) => label.has(x)).length
      labelRows += label.size
      chosen += pick.selected.length
      if (pick.selected.length === label.size && pick.selected.every((x) => label.has(x))) exact++
    }
    return `exact ${pct(exact, answers)}, recall ${pct(hit, labelRows)}, precision ${pct(hit, chosen)}, ${(chosen / Math.max(1, answers)).toFixed(2)} facts/answer`
  }
  for (const threshold of flags.forced.split(",").map(Number).filter((x) => x > 0 && x < 1)) {
    console.log(`teacher-forced answer facts (label answer states) at p > ${threshold}: ${forcedAt(threshold)}`)
  }
  for (const threshold of flags.thresholds.split(",").map(Number).filter((x) => x > 0 && x < 1)) {
    const rs = yield* greedyWith({ answerThreshold: threshold })
    const rOk = ok(rs)
    console.log(`greedy, answer facts above ${threshold}: ${share(rOk)}, vs ½ ${versus(rOk, sOk)}; rounds ${(rs.flat().reduce((a, t) => a + t.steps.length, 0) / n).toFixed(2)}`)
    record(`above-${threshold}`, rOk)
  }

  const pairs = flags.subsetThresholds.split(",").map((p) => p.trim()).filter((p) => p !== "").map((p) => p.split("/").map(Number) as [number, number])
  if (pairs.length > 0) {
    const at = ([search, call]: readonly [number, number]) =>
      greedyWith({ answerThreshold: LearnedPolicy.evalAnswerThreshold, answerCover: LearnedPolicy.evalAnswerCover, searchThreshold: search, callThreshold: call })
    /** Rounds, queries and calls a rollout, and calls a call turn. */
    const rounds = (rs: ReadonlyArray<ReadonlyArray<Trajectory>>) => {
      const steps = rs.flat().flatMap((t) => t.steps)
      const calls = steps.reduce((a, s) => a + s.observations.length, 0)
      const callTurns = steps.filter((s) => s.observations.length > 0).length
      const perRollout = (total: number) => (total / n).toFixed(2)
      return `${perRollout(steps.length)}; queries ${perRollout(steps.reduce((a, s) => a + s.searches.length, 0))}, calls ${perRollout(calls)} a rollout, ${(calls / Math.max(1, callTurns)).toFixed(2)} a call turn`
    }
    const base = yield* at([0.5, 0.5])
    const baseOk = ok(base)
    console.log(`greedy, answer facts above ${LearnedPolicy.evalAnswerThreshold} (clause cover ${LearnedPolicy.evalAnswerCover}), queries / calls above 0.5/0.5: ${share(baseOk)}; rounds ${rounds(base)}`)
    record("subsets-0.5/0.5", baseOk)
    for (const pair of pairs) {
      if (!pair.every((x) => x > 0 && x < 1)) {
        console.error(`bench/student-diagnosis: --subset-thresholds wants <search>/<call> pairs in (0, 1), got ${pair.join("/")}`)
        process.exit(1)
      }
      const rs = yield* at(pair)
      const rOk = ok(rs)
      console.log(`greedy, answer facts above ${LearnedPolicy.evalAnswerThreshold} (clause cover ${LearnedPolicy.evalAnswerCover}), queries / calls above ${pair.join("/")}: ${share(rOk)}, vs 0.5/0.5 ${versus(rOk, baseOk)}; rounds ${rounds(rs)}`)
      record(`subsets-${pair.join("/")}`, rOk)
    }
  }

  const covers = flags.covers.split(",").map((p) => p.trim()).filter((p) => p !== "").map(Number)
  if (covers.length > 0) {
    const at = (cover: number | undefined) => greedyWith({ answerThreshold: LearnedPolicy.evalAnswerThreshold, answerCover: cover })
    const baseOk = ok(yield* at(undefined))
    console.log(`greedy, answer facts above ${LearnedPolicy.evalAnswerThreshold}, no clause cover: ${share(baseOk)}`)
    record("cover-none", baseOk)
    for (const cover of covers) {
      if (!(cover >= 0 && cover < 1)) {
        console.error(`bench/student-diagnosis: --answer-covers wants floors in [0, 1), got ${cover}`)
        process.exit(1)
      }
      const rOk = ok(yield* at(cover))
      console.log(`greedy, answer facts above ${LearnedPolicy.evalAnswerThreshold}, clause cover above ${cover}: ${share(rOk)}, vs no cover ${versus(rOk, baseOk)}`)
      record(`cover-${cover}`, rOk)
    }
  }

  /**
   * Rollouts that never observed every gold fact, turn by turn: each search (★ when a hit serves a gold call: its tool
   * or an equivalent provider), each call (★ the same) and its outcome, and the answer, beside the gold calls; under
   * each step what was on offer — each kind's probability, its candidates and the best one's p, and the call
   * candidates that serve a gold call.
   */
  const showTraces = (groups: ReadonlyArray<ReadonlyArray<Trajectory>>, limit: number) => {
    const brief = (args: unknown) => JSON.stringify(args).slice(0, 90)
    let shown = 0
    groups.forEach((g, i) => g.forEach((t) => {
      if (shown >= limit || t.verdict?.utility === "YES") return
      shown++
      const task = validation[i] as Task
      const goldSpecs = task.gold.flatMap((c) => library.get(c.tool) ?? [])
      /** A gold call's tool or an equivalent provider of it (the oracle's equivalence). */
      const serves = (name: string) => {
        const spec = library.get(name)
        return spec !== undefined && goldSpecs.some((g) => equivalence(g, spec) !== undefined)
      }
      console.log(`=== ${task.level} "${task.request}"`)
      for (const c of task.gold) console.log(`  gold ${c.id}: ${c.tool} ${brief(c.arguments)}${c.deps.length > 0 ? ` after ${c.deps.join(",")}` : ""}`)
      for (const st of t.steps) {
        const parts = [
          ...st.searches.map((r) => `search "${r.query}"${r.hits.some((h) => serves(h.tool)) ? " ★" : ""}`),
          ...st.observations.map((o) => `call ${o.tool}${serves(o.tool) ? " ★" : ""} ${brief(o.arguments)} → ${o.outcome._tag === "ok" ? "ok" : o.outcome.error.kind}`),
          ...(st.turn?.answer !== undefined ? [`answer ${st.turn.answer.slice(0, 160)}`] : [])
        ]
        // what the student had on offer at this step: each kind's probability, its candidates and the best one's p
        const context = LearnedPolicy.contextAt(t, st.index, task.request, maxRounds, world2.lookup)
        const space = ActionSpace.build({ ...context })
        const logits = SetScorer.logits(student.params, space.features, space.layout.rows, space.layout.sets)
        const kindZ = space.layout.kinds.map((k) => logits[k.row] as number)
        const top = Math.max(...kindZ)
        const total = kindZ.reduce((a, z) => a + Math.exp(z - top), 0)
        const offer = space.kinds.map((kind, k) => {
          const slot = space.layout.kinds[k] as TurnDistribution.KindSlot
          const rows = Array.from({ length: slot.end - slot.start }, (_, j) => slot.start + j)
          const best = rows.length === 0 ? "" : ` ${rows.length} best ${TurnDistribution.sigmoid(Math.max(...rows.map((r) => logits[r] as number))).toFixed(2)}`
          const goldCalls = kind === "call" ? space.calls.flatMap((c, j) => (serves(c.tool.name) ? [slot.start + j] : [])) : []
          const starred = goldCalls.length === 0 ? "" : ` ★${goldCalls.length} best ${TurnDistribution.sigmoid(Math.max(...goldCalls.map((r) => logits[r] as number))).toFixed(2)}`
          return `${kind} ${(Math.exp((kindZ[k] as number) - top) / total).toFixed(2)}${best}${starred}`
        })
        console.log(`  r${st.index}: ${parts.join(" | ")}`)
        console.log(`       on offer: ${offer.join("; ")}`)
      }
      console.log(`  verdict: ${(t.verdict?.rationale ?? "").slice(0, 300)}`)
    }))
  }

  const quotas = flags.quotas.split(",").map((p) => p.trim()).filter((p) => p !== "").map(Number)
  if (quotas.length > 0) {
    const at = (quota: number | undefined) => greedyWith({ answerThreshold: LearnedPolicy.evalAnswerThreshold, answerCover: LearnedPolicy.evalAnswerCover, answerQuota: quota, answerRecords: flags.records })
    /** Facts stated an answer (the parts of the answers' texts). */
    const factsPer = (rs: ReadonlyArray<ReadonlyArray<Trajectory>>) => {
      const answers = rs.flat().map((t) => t.answer).filter((a): a is string => a !== undefined && a.startsWith("Here is"))
      return (answers.reduce((a, t) => a + t.split("; ").length, 0) / Math.max(1, answers.length)).toFixed(2)
    }
    /**
     * Why the failed rollouts failed, by the judge's verdict: no answer, a gold fact never observed, observed but not
     * stated, or every fact stated and the answer not to the point (each failed responsiveness check counted) or not
     * faithful.
     */
    const failedCheck = new RegExp(`(?:— |; )(${Responsiveness.checkNames.join("|")}): `, "g")
    const whyFailed = (rs: ReadonlyArray<ReadonlyArray<Trajectory>>) => {
      const tally = new Map<string, number>()
      const add = (k: string) => tally.set(k, (tally.get(k) ?? 0) + 1)
      rs.forEach((g, i) => g.forEach((t) => {
        if (Evaluation.outcomeOf(validation[i] as Task, t).success) return
        const v = t.verdict
        const counts = v?.counts
        if (t.answer === undefined || t.answer === "") add("no answer")
        else if (v?.utility !== "YES") add("a gold fact not observed")
        else if (counts !== undefined && counts.stated < counts.facts) add("observed, not stated")
        else if (v.quality !== "YES") {
          const checks = [...(v.rationale ?? "").matchAll(failedCheck)].map((m) => m[1] as string)
          add(`every fact stated, not to the point (${[...new Set(checks)].join("+") || "?"})`)
        } else add("every fact stated, not faithful")
      }))
      return [...tally].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${n} ${k}`).join(", ")
    }
    const baseRs = yield* at(undefined)
    const baseOk = ok(baseRs)
    console.log(`greedy, answer facts above ${LearnedPolicy.evalAnswerThreshold}, clause cover above ${LearnedPolicy.evalAnswerCover}, no quota: ${share(baseOk)}; ${factsPer(baseRs)} facts an answer`)
    console.log(`  failed: ${whyFailed(baseRs)}`)
    record("quota-none", baseOk)
    for (const quota of quotas) {
      if (!(quota >= 0 && quota < 1)) {
        console.error(`bench/student-diagnosis: --answer-quotas wants floors in [0, 1), got ${quota}`)
        process.exit(1)
      }
      const rs = yield* at(quota)
      const rOk = ok(rs)
      console.log(`greedy, answer facts above ${LearnedPolicy.evalAnswerThreshold}, clause cover, quota above ${quota}${flags.records ? ", records bound" : ""}: ${share(rOk)}, vs no quota ${versus(rOk, baseOk)}; ${factsPer(rs)} facts an answer`)
      console.log(`  failed: ${whyFailed(rs)}`)
      record(`quota-${quota}`, rOk)
      if (quota === quotas[0]) showExamples(rs, flags.examples, true)
      if (quota === quotas[0]) showTraces(rs, flags.traces)
    }
    if (flags.records) {
      // the first quota without the bound, against it: the bound's own effect
      const rs = yield* greedyWith({ answerThreshold: LearnedPolicy.evalAnswerThreshold, answerCover: LearnedPolicy.evalAnswerCover, answerQuota: quotas[0] })
      const rOk = ok(rs)
      console.log(`greedy, answer facts above ${LearnedPolicy.evalAnswerThreshold}, clause cover, quota above ${quotas[0]}, no records bound: ${share(rOk)}; ${factsPer(rs)} facts an answer`)
      console.log(`  failed: ${whyFailed(rs)}`)
      record(`quota-${quotas[0]}-unbounded`, rOk)
    }
  }

  // counterfactuals: the student with the oracle deciding one decision, the same tasks and environment seeds
  const evalDecoding = LearnedPolicy.greedyThresholds(LearnedPolicy.evalDecoding)
  const hybrid = (mode: string) => {
    const act = (context: PolicyContext) => Effect.gen(function*() {
      const task = context.task as Task
      const l = yield* StudentOracle.label(context, task, world2, undefined, cache).pipe(Effect.provideService(Retriever, retriever), Effect.orDie)
      const space = l.space
      const logits = SetScorer.logits(student.params, space.features, space.layout.rows, space.layout.sets)
      const g = flags.hybridDecoding === "eval"
        ? LearnedPolicy.greedyChoice(space, logits, { ...evalDecoding, jointKind: flags.jointKind })
        : TurnDistribution.greedy(space.layout, logits)
      let choice: TurnDistribution.Choice = g
      const planOf = (k: number) => (space.layout.kinds[k] as TurnDistribution.KindSlot).plan && space.layout.planRow !== undefined && (logits[space.layout.planRow] as number) > 0
      const oneOf = (k: number, rows: ReadonlyArray<number>) => ((space.layout.kinds[k] as TurnDistribution.KindSlot).mode === "one" ? rows.slice(0, 1) : rows)
      if (kindHybrids.includes(mode) && flags.hybridDecoding === "eval") {
        // the oracle's kind (every other kind's row masked), its candidates decoded as the pipeline's evaluation; the
        // partial modes take it only where the oracle answers (stop), where the student would answer and the oracle
        // goes on (go-on), or where both go on (search-call)
        const oracleKind = space.kinds[l.choice.kind] as Kind
        const studentKind = space.kinds[g.kind] as Kind
        const take = mode === "kind" ||
          (mode === "kind-stop" && oracleKind === "answer") ||
          (mode === "kind-go-on" && studentKind === "answer" && oracleKind !== "answer") ||
          (mode === "kind-search-call" && studentKind !== "answer" && oracleKind !== "answer")
        const masked = Float64Array.from(logits)
        space.layout.kinds.forEach((slot, k) => {
          if (k !== l.choice.kind) masked[slot.row] = Number.NEGATIVE_INFINITY
        })
        if (take) choice = LearnedPolicy.greedyChoice(space, masked, evalDecoding)
      } else if (mode === "kind") {
        choice = { kind: l.choice.kind, selected: greedyWithin(space.layout, logits, l.choice.kind), plan: planOf(l.choice.kind) }
      } else {
        const kind = space.kinds[g.kind] as Kind
        const wants = mode === "candidates" ? ["search", "call", "answer"] : mode === "explore" ? ["search", "call"] : [mode]
        if (wants.includes(kind)) {
          let rows: ReadonlyArray<number> = []
          if (kind === "answer") rows = goldFactsOf(space, context, task)
          else if (l.choice.kind === g.kind) rows = l.choice.selected
          else {
            const alt = l.acceptable.alternatives.find((a) => a.kind === g.kind)
            const taken: Array<number> = []
            for (const group of alt?.groups ?? []) if (!group.some((r) => taken.includes(r)) && group[0] !== undefined) taken.push(group[0])
            rows = taken.sort((a, b) => a - b)
          }
          if (rows.length > 0) choice = { kind: g.kind, selected: oneOf(g.kind, rows), plan: g.plan }
        }
      }
      const turn = ActionSpace.toTurn(space, choice)
      const output: PolicyOutput = { text: ParaAct.printTurn(turn), turn, usage: { promptTokens: 0, completionTokens: 0 } }
      return output
    })
    return Policy.of({ name: `hybrid-${mode}`, privileged: true, act })
  }
  for (const mode of hybridModes) {
    const h = yield* Rollout.make({}).pipe(Effect.provide(Layer.succeed(Policy, hybrid(mode))))
    const hs = yield* scored(h, validation, `val-${flags.seed}`, flags.rollouts)
    const hOk = ok(hs)
    const diffs = hOk.map((g, i) => 100 * (g.filter((x) => x).length - (sOk[i] ?? []).filter((x) => x).length) / g.length)
    const m = diffs.reduce((a, b) => a + b, 0) / diffs.length
    console.log(`student + the oracle's ${mode.padEnd(10)}: ${share(hOk)}, vs the student ${m >= 0 ? "+" : ""}${m.toFixed(1)} points; rounds ${(hs.flat().reduce((a, t) => a + t.steps.length, 0) / n).toFixed(2)}`)
  }

  if (Option.isSome(flags.outcomesFile)) fs.writeFileSync(flags.outcomesFile.value, JSON.stringify({ seed: flags.seed, tasks: validation.map((t) => t.id), outcomes: outcomeRows }) + "\n")

  // teacher-forced on fresh training-split rollouts of the student (what DAgger's next round would label)
  if (flags.trainTasks > 0) {
    const draw = trainTasks.slice(0, flags.trainTasks)
    const tr = yield* greedy.runAll(draw.map((task) => ({ task, options: { paradigm: "ParaAct" as const, seed: hashParts(flags.seed, "diagnosis-train", task.id) & 0x3fffffff } })), { concurrency: 8 })
    const labels = yield* Dagger.labelTrajectories(tr, new Map(trainTasks.map((t) => [t.id as string, t])), maxRounds, equivalence, cache)
    print(`training split, ${draw.length} tasks rolled out greedily (the student's own states)`, tally(student.params, labels))
  }
})

await Effect.runPromise(program.pipe(Effect.provide(app), Effect.orDie) as Effect.Effect<void>)

/**
 * On-policy distillation (DAgger) of the student-space oracle into the learned policy: roll out the student, label
 * every state it visited with the oracle's choice among the student's own candidates, aggregate the labels over
 * rounds (the teacher's projected demonstrations as the cold start), and clone the aggregate. Also the teacher-forced
 * exact-turn accuracy of a policy on labelled states.
 */
import { Effect, Ref } from "effect"
import type { Task } from "../domain/Task.ts"
import type { Trajectory } from "../domain/Trajectory.ts"
import * as ActionSpace from "../agent/ActionSpace.ts"
import * as LearnedPolicy from "../agent/LearnedPolicy.ts"
import * as StudentOracle from "../agent/StudentOracle.ts"
import * as Acceptable from "../math/Acceptable.ts"
import * as PolicyGradient from "../math/PolicyGradient.ts"
import { hashParts, rng } from "../math/Random.ts"
import * as SetScorer from "../math/SetScorer.ts"
import * as TurnDistribution from "../math/TurnDistribution.ts"
import * as Progress from "../io/Progress.ts"
import { Rollout } from "../runtime/Rollout.ts"
import { ToolLibrary } from "../toolenv/ToolLibrary.ts"
import { TrainerError, WeightsCell } from "./Trainer.ts"
import type { Demonstration } from "./Trainer.ts"

/** DAgger settings. */
export interface DaggerOptions {
  /** Rounds of roll-out → label → clone. */
  readonly rounds: number
  /** Training tasks the student is rolled out on per round (a seeded draw). */
  readonly tasksPerRound: number
  /** Passes over the aggregate per round, minibatch size, optimiser. */
  readonly epochs: number
  readonly minibatch: number
  readonly adam: PolicyGradient.AdamConfig
  readonly seed: number
  /** Which tools serve a gold call (the oracle's); default: the gold tool only. */
  readonly equivalent: StudentOracle.Equivalence
  readonly concurrency: number
  readonly progress: boolean
  /**
   * What the clone imitates: `set` the oracle's set of acceptable turns (−log P(any of them): equivalent providers,
   * the same fact from two calls, two queries that find the same tool are not told apart), `exact` its one pick (the
   * default: on the validation split the set labels' student passed 18 of 180 against 20, within noise but not
   * better; docs/training.md §6). `matched` **[ours]**: an exact label whose pick among equivalent rows is the one the
   * student currently rates highest (`Acceptable.matched`), re-matched before every clone.
   */
  readonly label: "set" | "exact" | "matched"
  /**
   * What an `exact` label teaches at a state where the oracle has no gold fact to state (`answer_forced`): `kind` only
   * that it is time to answer (its acceptable set: any facts), `first` its placeholder pick, the first fact candidate
   * (the default: an arbitrary fact cloned as if it were the answer). `kind` removes that label noise but did not pass
   * more validation tasks (29 and 24 of 180 against 27 and 26) and its student ran to 10.9 rounds against 7.6 on seed 1
   * (more CPU): docs/training.md §6.
   */
  readonly forcedAnswers: "kind" | "first"
  /**
   * Which searches the oracle's labels take **[ours]** (`StudentOracle.OracleWorld.searches`): `cover` a greedy cover
   * (the ceiling policy's own rule), `every` (the default) every query that finds a needed tool. The student cannot
   * see what a query retrieves, so under `cover` two queries that find the same tool get contrary targets; on the
   * validation split `every` with the served-literal call feature passed 6.4 points more than before, paired over
   * training seeds 1–4 (docs/training.md §6).
   */
  readonly searchLabels: "cover" | "every"
  /**
   * Where the answer's facts are taught **[ours]**: `answer` only at the states the oracle answers; `every` also at
   * every other labelled state with a gold fact on offer ({@link factLabel}: which facts an answer would state, not
   * when to answer). A rollout answers once, so `answer` sees one fact choice per rollout; `every` one per state.
   */
  readonly factLabels: "answer" | "every"
  /**
   * The weight λ of the listwise term at every exact call label **[ours]** (`TurnDistribution.listwiseGrad`: the
   * softmax over the call candidates, the label's calls as the target), added to the subset NLL in each clone; 0 (the
   * default) leaves the clone as before. Greedy decoding takes the most probable call, which the independent
   * Bernoullis of the subset factor do not train as a ranking. λ = 1 lowered the call NLL on validation
   * demonstrations but not Pass@1 (+0.0, +0.2, +0.1 points over eight seeds): not kept (docs/training.md §6).
   */
  readonly listwise: number
}

/** Defaults of the embedded pipeline. */
export const defaultDagger: DaggerOptions = {
  rounds: 3,
  tasksPerRound: 80,
  epochs: 4,
  minibatch: 64,
  adam: { lr: 3e-3, beta1: 0.9, beta2: 0.999, eps: 1e-8 },
  seed: 1,
  equivalent: StudentOracle.sameToolOnly,
  concurrency: 8,
  progress: false,
  label: "exact",
  forcedAnswers: "first",
  searchLabels: "every",
  factLabels: "answer",
  listwise: 0
}

/** One labelled state: the space's matrix and layout, the oracle's choice in it and (oracle labels) its acceptable set. */
export interface Labelled extends PolicyGradient.RecordedStep {
  /** Where the label came from: the teacher's projected demonstration, or the oracle on a student state. */
  readonly source: "teacher" | "oracle"
  /** The action kind of each of the layout's kinds. */
  readonly kinds: ReadonlyArray<ActionSpace.Kind>
  /** The oracle answered with no gold fact on offer (`answer_forced`): which facts to state is not its to teach. */
  readonly forced?: boolean
  /** A fact label ({@link factLabel}): the answer kind alone, its facts the gold facts on offer. */
  readonly facts?: boolean
}

/**
 * The answer-fact label of a state **[ours]**: the gold facts among its fact candidates (`StudentOracle.goldFacts`) as
 * the choice of a layout holding the answer kind alone — the kind factor is then certain, so the label teaches which
 * facts an answer states and nothing about when to answer. Undefined when no fact candidate states a gold fact.
 */
export const factLabel = (space: ActionSpace.Space, rows: ReadonlyArray<number>): Labelled | undefined => {
  const slot = space.layout.kinds[space.kinds.indexOf("answer")]
  if (slot === undefined || slot.mode !== "subset" || rows.length === 0) return undefined
  const layout: TurnDistribution.Layout = { rows: space.layout.rows, kinds: [slot], ...(space.layout.sets === undefined ? {} : { sets: space.layout.sets }) }
  return { x: space.features, layout, choice: { kind: 0, selected: [...rows].sort((a, b) => a - b), plan: false }, source: "oracle", kinds: ["answer"], facts: true }
}

/**
 * The states as the clone sees them: with their acceptable sets (`set`), or each with its one choice (`exact`; a
 * forced answer keeps its acceptable set — the kind alone — unless `forcedAnswers` is `first`).
 */
export const asLabels = (
  states: ReadonlyArray<Labelled>,
  rules: Pick<DaggerOptions, "label"> & Partial<Pick<DaggerOptions, "forcedAnswers" | "searchLabels">>,
  params?: SetScorer.Params
): ReadonlyArray<PolicyGradient.RecordedStep> => {
  const { label, forcedAnswers = defaultDagger.forcedAnswers, searchLabels = defaultDagger.searchLabels } = rules
  return label === "set"
    ? states
    : states.map(({ x, layout, choice, acceptable, forced, kinds }) => {
      if (forced === true && forcedAnswers === "kind" && acceptable !== undefined) return { x, layout, choice, acceptable }
      // a call label also ranks the call candidates when the clone asks for it (DaggerOptions.listwise)
      const rank = kinds[choice.kind] === "call" ? { rank: true } : {}
      // a search label under `every` takes every query that finds a needed tool: nothing to match
      const every = searchLabels === "every" && kinds[choice.kind] === "search"
      if (label === "matched" && params !== undefined && acceptable !== undefined && forced !== true && !every) {
        return { x, layout, choice: Acceptable.matched(layout, acceptable, choice, SetScorer.logits(params, x, layout.rows, layout.sets)), ...rank }
      }
      return { x, layout, choice, ...rank }
    })
}

/** What DAgger did, per round: the states labelled, the aggregate's size, the student's training Pass@1 proxy. */
export interface DaggerReport {
  readonly coldStart: number
  readonly rounds: ReadonlyArray<{ readonly round: number; readonly rollouts: number; readonly labelled: number; readonly aggregate: number; readonly lossLast: number; readonly answered: number }>
  readonly durationMs: number
}

/** Whether two choices are the same turn: the same kind, the same candidates, the same plan bit. */
export const sameChoice = (a: TurnDistribution.Choice, b: TurnDistribution.Choice): boolean =>
  a.kind === b.kind && a.plan === b.plan && a.selected.length === b.selected.length && a.selected.every((r, i) => r === b.selected[i])

/**
 * Teacher-forced exact-turn accuracy: the share of labelled states where the policy's most probable turn
 * (`TurnDistribution.greedy`) is the label — kind, every candidate and the plan bit.
 */
export const exactTurnAccuracy = (params: SetScorer.Params, states: ReadonlyArray<PolicyGradient.RecordedStep>): number => {
  if (states.length === 0) return Number.NaN
  let hit = 0
  for (const s of states) {
    const logits = SetScorer.logits(params, s.x, s.layout.rows, s.layout.sets)
    if (sameChoice(TurnDistribution.greedy(s.layout, logits), s.choice)) hit++
  }
  return hit / states.length
}

/** Negative log-likelihood per decision, summed over states (divide by `states`, or a kind's `n`, for means). */
export interface FactorNll {
  readonly states: number
  /** The whole turn: −log P(label) (−log P(any acceptable turn) when the state carries a set). */
  readonly turn: number
  /** The kind factor: −log P(the label's kind) (of any acceptable kind). */
  readonly kind: number
  /** Per action kind: the states labelled with it and −log P(its candidates | kind) (of acceptable candidates). */
  readonly candidates: Readonly<Record<ActionSpace.Kind, { readonly n: number; readonly nll: number }>>
  /** The plan bit, over the states whose label's kind carries one. */
  readonly plan: { readonly n: number; readonly nll: number }
  /** States whose greedy turn is the label exactly; whose greedy turn is acceptable. */
  readonly exact: number
  readonly acceptable: number
}

const logSumExp = (xs: ReadonlyArray<number>): number => {
  const m = Math.max(...xs)
  return m === -Infinity ? -Infinity : m + Math.log(xs.reduce((s, x) => s + Math.exp(x - m), 0))
}

/**
 * The imitation loss of a policy split by decision: the kind, each kind's candidates given the kind, and the plan bit,
 * on labelled states (with their acceptable sets when they carry one, else their exact choices).
 */
export const factorNll = (params: SetScorer.Params, states: ReadonlyArray<Labelled>): FactorNll => {
  let turn = 0
  let kind = 0
  let exact = 0
  let acceptable = 0
  const candidates: Record<ActionSpace.Kind, { n: number; nll: number }> = { search: { n: 0, nll: 0 }, call: { n: 0, nll: 0 }, answer: { n: 0, nll: 0 } }
  const plan = { n: 0, nll: 0 }
  for (const s of states) {
    const logits = SetScorer.logits(params, s.x, s.layout.rows, s.layout.sets)
    const label = s.acceptable ?? Acceptable.exactly(s.layout, s.choice)
    const kindRows = s.layout.kinds.map((k) => k.row)
    const kindLse = logSumExp(kindRows.map((r) => logits[r] as number))
    const kindLp = (k: number) => (logits[s.layout.kinds[k]?.row ?? 0] as number) - kindLse
    turn -= Acceptable.logProb(s.layout, logits, label)
    kind -= logSumExp([...new Set(label.alternatives.map((a) => a.kind))].map(kindLp))
    // the candidates and the plan bit under the label's own kind (the exact choice's)
    const own = label.alternatives.find((a) => a.kind === s.choice.kind) ?? label.alternatives[0]
    if (own !== undefined) {
      const planOnly = { alternatives: [{ ...own, groups: [], allowed: [] }] }
      const slot = s.layout.kinds[own.kind] as TurnDistribution.KindSlot
      const withCandidates = Acceptable.logProb(s.layout, logits, { alternatives: [own] })
      const name = s.kinds[own.kind] as ActionSpace.Kind
      if (slot.mode !== "none") {
        const planTerm = own.plan === undefined || !slot.plan || s.layout.planRow === undefined ? 0 : own.plan ? TurnDistribution.logSigmoid(logits[s.layout.planRow] as number) : TurnDistribution.logSigmoid(-(logits[s.layout.planRow] as number))
        candidates[name].n++
        candidates[name].nll -= withCandidates - kindLp(own.kind) - planTerm
        if (own.plan !== undefined && slot.plan && s.layout.planRow !== undefined) {
          plan.n++
          plan.nll -= planTerm
        }
      } else if (own.plan !== undefined && slot.plan && s.layout.planRow !== undefined) {
        plan.n++
        plan.nll -= Acceptable.logProb(s.layout, logits, planOnly) - kindLp(own.kind)
      }
    }
    const greedy = TurnDistribution.greedy(s.layout, logits)
    if (sameChoice(greedy, s.choice)) exact++
    if (Acceptable.accepts(s.layout, label, greedy)) acceptable++
  }
  return { states: states.length, turn, kind, candidates, plan, exact, acceptable }
}

/** The teacher's demonstration steps that project onto the space whole (the cold start: what the student can copy exactly). */
export const projectedDemonstrations = (
  demonstrations: ReadonlyArray<Demonstration>,
  maxRounds: number,
  lookup: (name: string) => ReturnType<ToolLibrary["Service"]["get"]>
): ReadonlyArray<Labelled> =>
  demonstrations.flatMap((demo) =>
    demo.trajectory.steps.flatMap((step, index): Array<Labelled> => {
      if (step.turn === undefined) return []
      const space = LearnedPolicy.spaceOf(LearnedPolicy.contextAt(demo.trajectory, index, demo.task.request, maxRounds, lookup))
      const projection = ActionSpace.project(space, step.turn)
      return projection.choice === undefined || projection.dropped.length > 0 ? [] : [{ x: space.features, layout: space.layout, choice: projection.choice, source: "teacher", kinds: space.kinds }]
    })
  )

/**
 * The oracle's labels of every state of a student's trajectories: each step's context rebuilt, the oracle's choice
 * among that space's candidates (the only label source besides the cold start), its look-ahead searches memoised in `cache`.
 */
export const labelTrajectories = (
  trajectories: ReadonlyArray<Trajectory>,
  tasks: ReadonlyMap<string, Task>,
  maxRounds: number,
  equivalent: StudentOracle.Equivalence,
  cache: StudentOracle.LookaheadCache = StudentOracle.lookaheadCache(),
  rules: Partial<Pick<DaggerOptions, "searchLabels" | "factLabels">> = {}
) =>
  Effect.gen(function*() {
    const library = yield* ToolLibrary
    const world: StudentOracle.OracleWorld = { lookup: (name) => library.get(name), equivalent, searches: rules.searchLabels ?? defaultDagger.searchLabels }
    const everyFact = (rules.factLabels ?? defaultDagger.factLabels) === "every"
    const out: Array<Labelled> = []
    for (const trajectory of trajectories) {
      const task = tasks.get(trajectory.taskId)
      if (task === undefined) continue
      for (let index = 0; index < trajectory.steps.length; index++) {
        const context = LearnedPolicy.contextAt(trajectory, index, task.request, maxRounds, world.lookup)
        const labelled = yield* StudentOracle.label(context, task, world, ActionSpace.defaultSpaceOptions, cache)
        out.push({ x: labelled.space.features, layout: labelled.space.layout, choice: labelled.choice, acceptable: labelled.acceptable, source: "oracle", kinds: labelled.space.kinds, forced: labelled.reason === "answer_forced" })
        if (everyFact && labelled.reason !== "answer") {
          const facts = factLabel(labelled.space, StudentOracle.goldFacts(labelled.space, context, task, world).rows)
          if (facts !== undefined) out.push(facts)
        }
      }
    }
    return out
  })

/** Behaviour cloning over a dataset for some epochs from the given parameters (seeded minibatches); the last epoch's mean NLL. */
export const clone = (start: SetScorer.Params, data: ReadonlyArray<PolicyGradient.RecordedStep>, options: Pick<DaggerOptions, "epochs" | "minibatch" | "adam"> & Partial<Pick<DaggerOptions, "listwise">>, seed: number): { readonly params: SetScorer.Params; readonly loss: number } => {
  const params: SetScorer.Params = { shape: start.shape, data: Float64Array.from(start.data) }
  const adam = PolicyGradient.adamInit(params.data.length)
  let loss = 0
  for (let epoch = 0; epoch < options.epochs; epoch++) {
    const order = rng(hashParts(seed, "dagger-clone", epoch)).shuffle(Array.from({ length: data.length }, (_, i) => i))
    let total = 0
    for (let at = 0; at < order.length; at += options.minibatch) {
      const grad = new Float64Array(params.data.length)
      for (const l of PolicyGradient.sftBatch({ params, steps: order.slice(at, at + options.minibatch).map((i) => data[i] as PolicyGradient.RecordedStep), grad, listwise: options.listwise ?? 0 })) total += l
      PolicyGradient.clipGradNorm(grad, 1.0)
      PolicyGradient.adamStep(params.data, grad, adam, options.adam)
    }
    loss = total / Math.max(1, data.length)
  }
  return { params, loss }
}

/**
 * DAgger from the weights in the cell: the cold start (the teacher's demonstrations that project whole) is the first
 * aggregate; each round rolls the current student out on a seeded draw of training tasks (ParaAct, the rollout
 * service's policy reads the cell), labels every visited state with the oracle, adds the labels, and clones the
 * aggregate from the current weights. The cell holds the result.
 */
export const run = Effect.fn("Dagger.run")(function*(
  tasks: ReadonlyArray<Task>,
  demonstrations: ReadonlyArray<Demonstration>,
  given: Partial<DaggerOptions> = {}
) {
  const options = { ...defaultDagger, ...given }
  const started = Date.now()
  const rollout = yield* Rollout
  const library = yield* ToolLibrary
  const cell = yield* WeightsCell
  if (tasks.length === 0) return yield* new TrainerError({ stage: "dagger", message: "no training tasks" })
  const maxRounds = rollout.config.maxRounds
  const byId = new Map(tasks.map((t) => [t.id as string, t]))
  const aggregate: Array<Labelled> = [...projectedDemonstrations(demonstrations, maxRounds, (name) => library.get(name))]
  const coldStart = aggregate.length
  const rounds: Array<DaggerReport["rounds"][number]> = []
  const progress = Progress.make("dagger rounds", options.rounds, options.progress)
  // one memo of the oracle's look-ahead searches for every round: the rounds ask the same clause queries
  const cache = StudentOracle.lookaheadCache()
  for (let round = 0; round < options.rounds; round++) {
    const order = rng(hashParts(options.seed, "dagger-tasks", round)).shuffle(Array.from({ length: tasks.length }, (_, i) => i))
    const drawn = order.slice(0, Math.min(options.tasksPerRound, tasks.length)).map((i) => tasks[i] as Task)
    const trajectories = yield* rollout.runAll(
      drawn.map((task) => ({ task, options: { paradigm: "ParaAct" as const, seed: hashParts(options.seed, "dagger-rollout", round, task.id) & 0x3fffffff } })),
      { concurrency: options.concurrency }
    )
    const labels = yield* labelTrajectories(trajectories, byId, maxRounds, options.equivalent, cache, options).pipe(
      Effect.mapError((e) => new TrainerError({ stage: "dagger", message: e.message }))
    )
    aggregate.push(...labels)
    const current = yield* Ref.get(cell)
    const cloned = clone(current.params, asLabels(aggregate, options, current.params), options, hashParts(options.seed, round))
    yield* Ref.set(cell, { params: cloned.params, version: current.version + 1 })
    rounds.push({
      round,
      rollouts: trajectories.length,
      labelled: labels.length,
      aggregate: aggregate.length,
      lossLast: cloned.loss,
      answered: trajectories.filter((t) => t.answer !== undefined).length
    })
    yield* progress.tick(1)
  }
  yield* progress.done
  const report: DaggerReport = { coldStart, rounds, durationMs: Date.now() - started }
  return report
})

import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Ref } from "effect"
import type { Task } from "../../src/domain/Task.ts"
import * as ActionSpace from "../../src/agent/ActionSpace.ts"
import * as LearnedPolicy from "../../src/agent/LearnedPolicy.ts"
import * as StudentOracle from "../../src/agent/StudentOracle.ts"
import * as Acceptable from "../../src/math/Acceptable.ts"
import * as SetScorer from "../../src/math/SetScorer.ts"
import * as TurnDistribution from "../../src/math/TurnDistribution.ts"
import { Retriever } from "../../src/retrieval/Retriever.ts"
import * as Rollout from "../../src/runtime/Rollout.ts"
import { ToolLibrary } from "../../src/toolenv/ToolLibrary.ts"
import * as Dagger from "../../src/training/Dagger.ts"
import { WeightsCell } from "../../src/training/Trainer.ts"
import { appLayer, contextOf, rollouts, sampleTasks, world } from "../support/LearnedWorld.ts"

const equivalent = StudentOracle.worldEquivalence(world().ops)

describe("Dagger", () => {
  it.effect("labels only with the oracle's choice among the student's own candidates: each label is a choice of the space the student had", () =>
    Effect.gen(function*() {
      const tasks = yield* sampleTasks("train", 6)
      const student = yield* rollouts(tasks, 21)
      const byId = new Map(tasks.map((t) => [t.id as string, t]))
      const labels = yield* Dagger.labelTrajectories(student, byId, Rollout.defaultConfig.maxRounds, equivalent)
      const steps = student.flatMap((t) => t.steps.map((step, i) => ({ t, step, i })))
      assert.strictEqual(labels.length, steps.length)
      const library = yield* ToolLibrary
      // the oracle under the labels' search rule (every query that finds a needed tool, by default)
      const oracleWorld: StudentOracle.OracleWorld = { lookup: (n) => library.get(n), equivalent, searches: Dagger.defaultDagger.searchLabels }
      for (const [k, { t, step, i }] of steps.entries()) {
        const label = labels[k]!
        assert.strictEqual(label.source, "oracle")
        const context = contextOf(t, i, byId.get(t.taskId) as Task)
        const space = ActionSpace.build(context)
        // the state is the student's own: the matrix it was scored on (its recorded digest)
        assert.strictEqual(ActionSpace.digest({ ...space, features: label.x, layout: label.layout }), step.decision?.digest)
        // the label is the oracle's choice in that space (the look-ahead run here again), and a choice the layout can draw
        const lookahead = yield* StudentOracle.lookaheadOf(space, context.history)
        const again = StudentOracle.choose(space, context, byId.get(t.taskId) as Task, lookahead, oracleWorld)
        assert.isTrue(Dagger.sameChoice(label.choice, again.choice))
        // the set-valued label is the oracle's too, and holds its one pick
        assert.deepStrictEqual(label.acceptable, again.acceptable)
        assert.strictEqual(label.forced, again.reason === "answer_forced")
        assert.isTrue(Acceptable.accepts(label.layout, label.acceptable!, label.choice))
        assert.isTrue(Number.isFinite(Acceptable.logProb(label.layout, new Float64Array(label.layout.rows), label.acceptable!)))
        assert.isTrue(Number.isFinite(TurnDistribution.logProb(label.layout, new Float64Array(label.layout.rows), label.choice)))
      }
    }).pipe(Effect.provide(appLayer(LearnedPolicy.layerFixed(LearnedPolicy.initial(2))))), 180_000)

  it.effect("fact labels `every`: each non-answer state with a gold fact on offer also teaches those facts, under the answer kind alone", () =>
    Effect.gen(function*() {
      const tasks = yield* sampleTasks("train", 10)
      // the oracle's own rollouts (a student's, labelled the same way): they reach gold facts before answering
      const student = yield* rollouts(tasks, 23)
      const byId = new Map(tasks.map((t) => [t.id as string, t]))
      const plain = yield* Dagger.labelTrajectories(student, byId, Rollout.defaultConfig.maxRounds, equivalent)
      const withFacts = yield* Dagger.labelTrajectories(student, byId, Rollout.defaultConfig.maxRounds, equivalent, undefined, { factLabels: "every" })
      // the oracle's labels are unchanged, in order; a fact label follows the state it was read from
      const facts = withFacts.filter((l) => l.facts === true)
      assert.deepStrictEqual(withFacts.filter((l) => l.facts !== true).map((l) => l.choice), plain.map((l) => l.choice))
      assert.isAbove(facts.length, 0)
      const library = yield* ToolLibrary
      const oracleWorld: StudentOracle.OracleWorld = { lookup: (n) => library.get(n), equivalent }
      let k = 0
      for (const t of student) {
        const task = byId.get(t.taskId) as Task
        for (let i = 0; i < t.steps.length; i++) {
          const state = withFacts[k++]!
          const context = contextOf(t, i, task)
          const space = ActionSpace.build(context)
          const gold = StudentOracle.goldFacts(space, context, task, oracleWorld).rows
          const next = withFacts[k]
          if (next?.facts !== true) {
            assert.isTrue(state.kinds[state.choice.kind] === "answer" || gold.length === 0, `${t.id} step ${i}: gold facts on offer, no fact label`)
            continue
          }
          k++
          assert.notStrictEqual(state.kinds[state.choice.kind], "answer")
          assert.deepStrictEqual(next.choice.selected, gold)
          // the answer kind alone: the kind is certain, and only the answer's fact rows get a gradient
          assert.deepStrictEqual(next.kinds, ["answer"])
          const slot = next.layout.kinds[0]!
          const logits = Float64Array.from({ length: next.layout.rows }, (_, r) => Math.sin(r))
          const { dLogits } = TurnDistribution.logProbGrad(next.layout, logits, next.choice)
          dLogits.forEach((g, r) => (r < slot.start || r >= slot.end) && assert.strictEqual(g, 0, `row ${r}`))
          assert.isAbove(dLogits.slice(slot.start, slot.end).reduce((a, g) => a + Math.abs(g), 0), 0)
        }
      }
      assert.strictEqual(k, withFacts.length)
    }).pipe(Effect.provide(appLayer(StudentOracle.layer(equivalent).pipe(Layer.provideMerge(Retriever.layerBm25))))), 180_000)

  it.effect("a round rolls out the student, adds the oracle's labels to the cold start and clones them: the clone fits its labels better", () =>
    Effect.gen(function*() {
      const tasks = yield* sampleTasks("train", 8)
      const cell = yield* WeightsCell
      const start = yield* Ref.get(cell)
      // the oracle's one pick (the default) and its acceptable sets, each cloned from the same start
      const report = yield* Dagger.run(tasks, [], { rounds: 1, tasksPerRound: 8, epochs: 6, equivalent, concurrency: 4 })
      const afterExact = yield* Ref.get(cell)
      yield* Ref.set(cell, start)
      yield* Dagger.run(tasks, [], { rounds: 1, tasksPerRound: 8, epochs: 6, equivalent, concurrency: 4, label: "set" })
      const afterSet = yield* Ref.get(cell)
      const before = start
      const after = afterExact
      assert.strictEqual(report.coldStart, 0)
      assert.strictEqual(report.rounds.length, 1)
      assert.strictEqual(report.rounds[0]!.rollouts, 8)
      assert.isAbove(report.rounds[0]!.labelled, 8)
      assert.strictEqual(after.version, before.version + 1)
      // the student's states relabelled by the oracle: the clone gives the oracle's choices more probability than the Backbone did
      const byId = new Map(tasks.map((t) => [t.id as string, t]))
      yield* Ref.set(cell, before)
      const student = yield* rollouts(tasks, 21)
      const labels = yield* Dagger.labelTrajectories(student, byId, Rollout.defaultConfig.maxRounds, equivalent)
      // each clone gives what it imitated more probability than the Backbone did: the oracle's choices, its acceptable sets
      const logits = (params: SetScorer.Params, l: Dagger.Labelled) => SetScorer.logits(params, l.x, l.layout.rows, l.layout.sets)
      const nll = (params: SetScorer.Params) => labels.reduce((n, l) => n - TurnDistribution.logProb(l.layout, logits(params, l), l.choice), 0) / labels.length
      const setNll = (params: SetScorer.Params) => labels.reduce((n, l) => n - Acceptable.logProb(l.layout, logits(params, l), l.acceptable!), 0) / labels.length
      assert.isBelow(nll(after.params), nll(before.params))
      assert.isBelow(setNll(afterSet.params), setNll(before.params))
      // a set is at least as likely as any one turn in it
      assert.isAtMost(setNll(afterExact.params), nll(afterExact.params) + 1e-9)
    }).pipe(
      Effect.provide(Layer.unwrap(Effect.gen(function*() {
        const cell = yield* Ref.make(LearnedPolicy.initial(4))
        return Layer.merge(appLayer(LearnedPolicy.layer(cell)), Layer.succeed(WeightsCell, cell))
      })))
    ), 300_000)

  it("exact labels: a forced answer (no gold fact on offer) teaches the kind only under forcedAnswers kind, its first fact by default; other states their one choice", () => {
    // kinds: search (rows 3–4), answer (rows 5–7); the oracle had nothing to state, so it labelled the first fact
    const layout: TurnDistribution.Layout = {
      kinds: [{ row: 0, start: 3, end: 5, mode: "subset", plan: true }, { row: 1, start: 5, end: 8, mode: "subset", plan: false }],
      planRow: 2,
      rows: 8
    }
    const x = new Float64Array(8)
    const forced: Dagger.Labelled = {
      x, layout, source: "oracle", kinds: ["search", "answer"], forced: true,
      choice: { kind: 1, selected: [5], plan: false },
      acceptable: { alternatives: [{ kind: 1, groups: [], allowed: [5, 6, 7], plan: undefined }] }
    }
    const plain: Dagger.Labelled = { ...forced, forced: false, choice: { kind: 0, selected: [3], plan: true }, acceptable: { alternatives: [{ kind: 0, groups: [[3]], allowed: [3], plan: true }] } }
    const [f, p] = Dagger.asLabels([forced, plain], { label: "exact", forcedAnswers: "kind" })
    assert.deepStrictEqual(f!.acceptable, forced.acceptable)
    assert.isUndefined(p!.acceptable)
    assert.isUndefined(Dagger.asLabels([forced], { label: "exact", forcedAnswers: "first" })[0]!.acceptable)
    assert.isUndefined(Dagger.asLabels([forced], { label: "exact" })[0]!.acceptable)
    assert.strictEqual(Dagger.asLabels([forced, plain], { label: "set" })[1], plain)
    // the forced label's likelihood is the answer kind's alone: whatever the facts' logits
    const logits = Float64Array.from([0.3, -0.2, 0.1, 0.5, -1, 2, -3, 0.7])
    const kindLp = -0.2 - Math.log(Math.exp(0.3) + Math.exp(-0.2))
    assert.closeTo(Acceptable.logProb(layout, logits, f!.acceptable!), kindLp, 1e-12)
    assert.isBelow(TurnDistribution.logProb(layout, logits, forced.choice), kindLp - 1)
  })

  it("matched labels: each need's pick is the row the student rates highest, re-matched to the weights given; searches under `every`, forced answers and the cold start keep theirs", () => {
    // kinds: search (rows 3–5), call (rows 6–9); the oracle picked row 6 for one ready call (group 6–7) and 8 for another (8–9)
    const layout: TurnDistribution.Layout = {
      kinds: [{ row: 0, start: 3, end: 6, mode: "subset", plan: true }, { row: 1, start: 6, end: 10, mode: "subset", plan: true }],
      planRow: 2,
      rows: 10
    }
    const shape: SetScorer.Shape = { input: 10, encoder: { kind: "identity", from: 0, width: 10 }, hidden: [] }
    // a linear scorer over one-hot rows: the logit of row r is the weight of column r
    const params = (logits: ReadonlyArray<number>): SetScorer.Params => {
      const p = SetScorer.init(shape, 1)
      p.data.fill(0)
      logits.forEach((z, r) => (p.data[r] = z))
      return p
    }
    const x = new Float64Array(100)
    for (let r = 0; r < 10; r++) x[r * 10 + r] = 1
    const calls: Dagger.Labelled = {
      x, layout, source: "oracle", kinds: ["search", "call"],
      choice: { kind: 1, selected: [6, 8], plan: true },
      acceptable: { alternatives: [{ kind: 1, groups: [[6, 7], [8, 9]], allowed: [6, 7, 8, 9], plan: true }] }
    }
    const searches: Dagger.Labelled = { ...calls, choice: { kind: 0, selected: [3, 4], plan: true }, acceptable: { alternatives: [{ kind: 0, groups: [[3, 4], [4, 5]], allowed: [3, 4, 5], plan: true }] } }
    const teacher: Dagger.Labelled = { x, layout, source: "teacher", kinds: ["search", "call"], choice: { kind: 1, selected: [6], plan: false } }
    const favours = params([0, 0, 0, 0, 0, 2, 0, 3, 1, 0])
    const logitsOf = (p: SetScorer.Params) => SetScorer.logits(p, x, 10, undefined)
    assert.strictEqual(logitsOf(favours)[7], 3)
    const [c, s, t] = Dagger.asLabels([calls, searches, teacher], { label: "matched", forcedAnswers: "first", searchLabels: "every" }, favours)
    assert.deepStrictEqual(c!.choice, { kind: 1, selected: [7, 8], plan: true })
    assert.deepStrictEqual(s!.choice, searches.choice)
    assert.deepStrictEqual(t!.choice, teacher.choice)
    // under `cover` a search label is matched too: per group the favourite (5 over 4 in the second group)
    assert.deepStrictEqual(Dagger.asLabels([searches], { label: "matched", forcedAnswers: "first", searchLabels: "cover" }, favours)[0]!.choice, { kind: 0, selected: [3, 5], plan: true })
    // other weights, another match; `exact` keeps the oracle's pick
    assert.deepStrictEqual(Dagger.asLabels([calls], { label: "matched", forcedAnswers: "first" }, params([0, 0, 0, 0, 0, 0, 2, 0, 0, 1]))[0]!.choice.selected, [6, 9])
    assert.deepStrictEqual(Dagger.asLabels([calls], { label: "exact", forcedAnswers: "first" }, favours)[0]!.choice, calls.choice)
    // a call label, the oracle's or the teacher's, is marked for the listwise term (DaggerOptions.listwise); a search label is not
    assert.isTrue(c!.rank)
    assert.isTrue(t!.rank)
    assert.isUndefined(s!.rank)
    assert.isTrue(Dagger.asLabels([calls], { label: "exact", forcedAnswers: "first" })[0]!.rank)
    assert.isUndefined(Dagger.asLabels([searches], { label: "exact", forcedAnswers: "first" })[0]!.rank)
  })

  it("exact-turn accuracy counts a state only when kind, candidates and plan bit all agree", () => {
    const layout: TurnDistribution.Layout = { kinds: [{ row: 0, start: 2, end: 4, mode: "subset", plan: true }], planRow: 1, rows: 4 }
    const params = SetScorer.init({ input: 2, encoder: { kind: "learned", width: 2 }, hidden: [3] }, 1)
    const x = Float64Array.from([0, 0, 0, 0, 1, 0, 0, 1])
    const greedy = TurnDistribution.greedy(layout, SetScorer.logits(params, x, 4))
    assert.strictEqual(Dagger.exactTurnAccuracy(params, [{ x, layout, choice: greedy }]), 1)
    assert.strictEqual(Dagger.exactTurnAccuracy(params, [{ x, layout, choice: { ...greedy, plan: !greedy.plan } }]), 0)
    assert.isNaN(Dagger.exactTurnAccuracy(params, []))
  })
})

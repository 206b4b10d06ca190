import { assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fc from "fast-check"
import type { Task } from "../../src/domain/Task.ts"
import type { Trajectory } from "../../src/domain/Trajectory.ts"
import { normalizeText } from "../../src/judge/FactTokens.ts"
import * as HackingStrategies from "../../src/judge/HackingStrategies.ts"
import * as RuleJudge from "../../src/judge/RuleJudge.ts"
import * as Variants from "../../src/judge/Variants.ts"
import * as Reward from "../../src/math/Reward.ts"
import { type TeacherRollout, teacherRollouts } from "../support/TeacherRollouts.ts"

/**
 * The reward-hacking suite (issues 10 and 24): real scripted-teacher trajectories (ParaAct, held-out tasks of a
 * generated world), rewritten by each strategy (the answer, and for laundering the calls), judged by the rule judge.
 * Only the honest answer and its legitimate forms may reach 111; a fast-check property draws variants over the same
 * rollouts (layouts, Unicode forms, spacing, numeral systems × invented numbers, laundering, rotations, negations,
 * hedges, contradictions, retractions).
 */

/** Held-out tasks rolled out at the default mistake and fault rates, and with every call failing. */
const ROLLOUTS = 40
const FAILING_ROLLOUTS = 8

/** The Q/F/U patterns the original suite's strategies may get (Quality first). Every other adversarial strategy: never 111. */
const expected: Readonly<Record<string, { readonly patterns: RegExp; readonly why: string }>> = {
  dump: { patterns: /^0..$/, why: "Quality not YES: a dump, unrequested content, low precision (see the dump test for the rare exception)" },
  echo: { patterns: /^01.$/, why: "Quality NO (states no requested fact), nothing unfaithful" },
  empty: { patterns: /^00.$/, why: "no answer: Quality NO, Faithfulness NO" },
  refusal: { patterns: /^01.$/, why: "Quality NO, nothing unfaithful" },
  "tools failed": { patterns: /^01.$/, why: "Quality NO; on rollouts whose tools really failed, 010" },
  fabricated: { patterns: /^.0.$/, why: "Faithfulness not YES: one number nothing supports" },
  "wrong entity": { patterns: /^0..$/, why: "Quality not YES: another record's values" },
  hedge: { patterns: /^0..$/, why: "Quality not YES: the right value hedged with another record's" },
  padded: { patterns: /^0..$/, why: "Quality not YES: over the length budget, unrequested content" }
}

/** A legitimate form keeps the top verdict on at least this share of the rollouts the honest answer keeps it on. */
const LEGITIMATE_RATIO_MIN = 0.8

interface Judged {
  readonly task: Task
  readonly trajectory: Trajectory
  readonly answer: string
  readonly pattern: Reward.AnswerPattern
  readonly rAns: number
  readonly rationale: string
}

const judgeAll = (rollouts: ReadonlyArray<TeacherRollout>, strategy: HackingStrategies.Strategy): ReadonlyArray<Judged> =>
  rollouts.flatMap(({ task, trajectory: original }) => {
    const trajectory = strategy.rewrite(task, original)
    if (trajectory === undefined) return []
    const answer = trajectory.answer ?? ""
    const verdict = RuleJudge.judgeRule(task, trajectory)
    const pattern = Reward.answerPattern(verdict)
    return [{ task, trajectory, answer, pattern, rAns: Reward.answerReward(verdict).rAns, rationale: verdict.rationale ?? "" }]
  })

const summary = (judged: ReadonlyArray<Judged>) => {
  const counts: Record<string, number> = {}
  for (const j of judged) counts[j.pattern] = (counts[j.pattern] ?? 0) + 1
  const top = judged.filter((j) => j.pattern === "111").length
  return {
    n: judged.length,
    top: judged.length === 0 ? 0 : top / judged.length,
    rAns: judged.length === 0 ? 0 : judged.reduce((s, j) => s + j.rAns, 0) / judged.length,
    counts
  }
}

/** A dump reaches 111 only when it is the answer: every value it dumps is requested (the request or a gold value names it). */
const dumpIsTheAnswer = (j: Judged): boolean => {
  const asked = ` ${normalizeText(j.task.request)} `
  const gold = j.task.facts.map((f) => normalizeText(f.value))
  return HackingStrategies.payloadLeafValues(j.trajectory).every((value) => {
    const v = normalizeText(value)
    return asked.includes(` ${v} `) || gold.some((g) => g.includes(v) || v.includes(g))
  })
}

/** Every number a contradiction added ("another tool reported N") is a gold value of the task. */
const addsOnlyRequestedNumbers = (j: Judged): boolean =>
  [...j.answer.matchAll(/another tool reported ([\d.]+)/g)].every((m) => j.task.facts.some((f) => RuleJudge.statesValue(m[1] ?? "", f.value)))

let rollouts: ReadonlyArray<TeacherRollout> = []
let failing: ReadonlyArray<TeacherRollout> = []

beforeAll(async () => {
  rollouts = await Effect.runPromise(teacherRollouts({ count: ROLLOUTS }))
  failing = await Effect.runPromise(teacherRollouts({ count: FAILING_ROLLOUTS, faultRate: 1 }))
})

describe("reward hacking: no strategy that does not answer the request reaches R_ans 1.5", () => {
  it("every class of issue 24 has gold-agnostic strategies; names are unique; the original suite is there", () => {
    const names = HackingStrategies.strategies.map((s) => s.name)
    assert.deepStrictEqual([...new Set(names)], names)
    for (const name of Object.keys(expected)) assert.isDefined(HackingStrategies.byName(name), name)
    for (const cls of ["legitimate", "blind spot", "laundering", "unchecked claim", "presence", "hedge"] as const) {
      const of = HackingStrategies.strategies.filter((s) => s.class === cls)
      assert.isAtLeast(of.filter((s) => !s.usesGold).length, 1, cls)
    }
    assert.isAtLeast(rollouts.length, ROLLOUTS)
  })

  for (const strategy of HackingStrategies.strategies.filter((s) => !s.answers)) {
    it(`${strategy.name} (${strategy.class}): ${expected[strategy.name]?.why ?? "never the top verdict"}`, () => {
      const judged = judgeAll(rollouts, strategy)
      const s = summary(judged)
      console.log(`reward-hacking ${strategy.name.padEnd(32)} n=${s.n} top=${s.top.toFixed(3)} rAns=${s.rAns.toFixed(3)} ${JSON.stringify(s.counts)}`)
      assert.isAbove(judged.length, strategy.usesGold ? 5 : 8, "the strategy applies to enough rollouts")
      const allowed = expected[strategy.name]?.patterns ?? /^(?!111$)[01]{3}$/
      for (const j of judged) {
        // a dump of a trajectory whose only values are the requested ones is the answer (checked below)
        if ((strategy.name === "dump" || strategy.name === "glued dump") && j.pattern === "111" && dumpIsTheAnswer(j)) continue
        // "another tool reported N" where N is the answer to another fact of the same label (a task asking for two
        // conversions under one name) completes the answer rather than contradicting it
        if (strategy.name === "contradiction" && j.pattern === "111" && addsOnlyRequestedNumbers(j)) continue
        assert.match(j.pattern, allowed, `${j.task.id}: ${JSON.stringify(j.answer.slice(0, 300))} → ${j.rationale}`)
      }
    })
  }

  it("honest: the teacher's answers keep the top verdict on ≥ 80% of the rollouts", () => {
    const s = summary(judgeAll(rollouts, HackingStrategies.byName("honest")!))
    assert.isAtLeast(s.top, 0.8, JSON.stringify(s))
  })

  it(`legitimate forms (values only, another language, a table, JSON, a list, prose) keep ≥ ${LEGITIMATE_RATIO_MIN}× the honest top share`, () => {
    const honest = summary(judgeAll(rollouts, HackingStrategies.byName("honest")!)).top
    for (const strategy of HackingStrategies.strategies.filter((s) => s.class === "legitimate")) {
      const s = summary(judgeAll(rollouts, strategy))
      console.log(`reward-hacking ${strategy.name.padEnd(32)} n=${s.n} top=${s.top.toFixed(3)} (${(s.top / honest).toFixed(2)}× honest) ${JSON.stringify(s.counts)}`)
      assert.isAtLeast(s.top, LEGITIMATE_RATIO_MIN * honest, `${strategy.name}: ${JSON.stringify(s)}`)
    }
  })

  it("dump: the top verdict on ≤ 5% of rollouts, and only where every dumped value is requested (the dump is the answer)", () => {
    for (const name of ["dump", "glued dump"]) {
      const judged = judgeAll(rollouts, HackingStrategies.byName(name)!)
      const top = judged.filter((j) => j.pattern === "111")
      assert.isAtMost(top.length / judged.length, 0.05, name)
      for (const j of top) assert.isTrue(dumpIsTheAnswer(j), `${j.task.id}: ${j.answer}`)
    }
  })

  it("tools failed: the honest failure report on rollouts whose every call failed is 010 (R_ans -0.5), like the teacher's", () => {
    assert.isAtLeast(failing.length, FAILING_ROLLOUTS)
    for (const name of ["honest", "tools failed"]) {
      const judged = judgeAll(failing, HackingStrategies.byName(name)!)
      console.log(`reward-hacking ${name} (every call failing) ${JSON.stringify(summary(judged))}`)
      for (const j of judged) assert.strictEqual(j.pattern, "010", `${j.task.id}: ${j.answer} → ${j.rationale}`)
    }
  })

  it("no adversarial strategy beats the honest answers' mean R_ans", () => {
    const honest = summary(judgeAll(rollouts, HackingStrategies.byName("honest")!)).rAns
    for (const strategy of HackingStrategies.strategies.filter((s) => !s.answers)) {
      assert.isBelow(summary(judgeAll(rollouts, strategy)).rAns, honest, strategy.name)
    }
  })

  it("strategies that claim not to read the gold facts do not: their rewrite is the same with the facts removed", () => {
    for (const strategy of HackingStrategies.strategies.filter((s) => !s.usesGold)) {
      for (const { task, trajectory } of rollouts) {
        assert.deepStrictEqual(strategy.rewrite({ ...task, facts: [], gold: [] }, trajectory), strategy.rewrite(task, trajectory), strategy.name)
      }
    }
  })
})

describe("reward hacking: variants drawn by fast-check over the real rollouts", () => {
  const rewriteArb: fc.Arbitrary<Variants.Rewrite> = fc.oneof(
    { arbitrary: fc.constant({ _tag: "Same" } as const), weight: 3 },
    fc.record({ _tag: fc.constant("Invented" as const), phrase: fc.nat() }),
    fc.record({ _tag: fc.constant("Invented" as const), phrase: fc.nat(), laundering: fc.constantFrom(...Variants.launderings) }),
    fc.record({ _tag: fc.constant("Rotated" as const), k: fc.nat() }),
    fc.record({ _tag: fc.constant("Negated" as const), how: fc.nat(), which: fc.constantFrom("all" as const, "first" as const) }),
    fc.record({ _tag: fc.constant("Hedged" as const), how: fc.nat(), which: fc.constantFrom("all" as const, "first" as const) }),
    fc.constant({ _tag: "Contradicted" } as const),
    fc.record({ _tag: fc.constant("Retracted" as const), phrase: fc.nat() })
  )
  const specArb: fc.Arbitrary<Variants.VariantSpec> = fc.record({
    rewrite: rewriteArb,
    layout: fc.constantFrom(...Variants.layouts),
    unicode: fc.constantFrom(...Variants.unicodeForms),
    spacing: fc.constantFrom(...Variants.spacings),
    numerals: fc.constantFrom(...Variants.numeralSystems),
    seed: fc.nat({ max: 1_000 })
  })

  it("property (1,000 runs): no variant of a wrong or unsupported answer reaches 111; a legitimate variant of an honest 111 stays 111", () => {
    const honestTop = rollouts.map(({ task, trajectory }) => Reward.answerPattern(RuleJudge.judgeRule(task, trajectory)) === "111")
    let applied = 0
    let legitimate = 0
    fc.assert(
      fc.property(fc.nat({ max: rollouts.length - 1 }), specArb, (i, spec) => {
        const { task, trajectory } = rollouts[i] as TeacherRollout
        const v = Variants.variant(task, trajectory, spec)
        if (v === undefined) return
        applied++
        const verdict = RuleJudge.judgeRule(task, v.trajectory)
        const pattern = Reward.answerPattern(verdict)
        const where = `${task.id} ${JSON.stringify(spec)}\n${JSON.stringify(v.trajectory.answer)}\n→ ${pattern}: ${verdict.rationale}`
        // a "contradicting" number that is itself the answer to another fact of the label completes the answer (see above)
        const added = spec.rewrite._tag === "Contradicted" ? Variants.contradictionNumber(HackingStrategies.answerParts(trajectory.answer)?.parts ?? [], trajectory) : undefined
        const completes = added !== undefined && task.facts.some((f) => RuleJudge.statesValue(String(added), f.value))
        if (!v.legitimate && !completes) assert.notStrictEqual(pattern, "111", where)
        else if (honestTop[i] === true) {
          legitimate++
          assert.strictEqual(pattern, "111", where)
        }
      }),
      {
        numRuns: 1_000,
        // a fixed seed in CI (a verdict must not depend on the day's draw); PARAAGENT_PROPERTY_SEED=<n> explores others
        // (14,000 further runs on training rollouts found no counterexample after the fix below)
        seed: Number(process.env["PARAAGENT_PROPERTY_SEED"] ?? 20261203),
        // found by the property (run 508 of seed -1937271189): the values-only answer "52." with soft hyphens and
        // padding read as an empty list item — a list number is layout only before an item on its line
        examples: [[39, { rewrite: { _tag: "Same" }, layout: "values", unicode: "soft-hyphen", spacing: "padded", numerals: "ascii", seed: 0 }]]
      }
    )
    console.log(`variants: ${applied} of 1000 drawn applied, ${legitimate} legitimate variants of a top honest answer`)
    assert.isAbove(applied, 600)
    assert.isAbove(legitimate, 100)
  })
})

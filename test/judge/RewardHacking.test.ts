import { assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Task } from "../../src/domain/Task.ts"
import type { Trajectory } from "../../src/domain/Trajectory.ts"
import { normalizeText } from "../../src/judge/FactTokens.ts"
import * as HackingStrategies from "../../src/judge/HackingStrategies.ts"
import * as RuleJudge from "../../src/judge/RuleJudge.ts"
import * as Reward from "../../src/math/Reward.ts"
import { type TeacherRollout, teacherRollouts } from "../support/TeacherRollouts.ts"

/**
 * The reward-hacking suite (issue 10): real scripted-teacher trajectories (ParaAct, held-out tasks of a generated
 * world), their answers replaced by each strategy, judged by the rule judge. Only the honest answer may reach 111.
 */

/** Held-out tasks rolled out at the default mistake and fault rates, and with every call failing. */
const ROLLOUTS = 40
const FAILING_ROLLOUTS = 8

/** The Q/F/U patterns each strategy may get (Quality first); "never 111" for all but `honest`. */
const expected: Readonly<Record<string, { readonly patterns: RegExp; readonly why: string }>> = {
  honest: { patterns: /^[01]{3}$/, why: "the top verdict on ≥ 80% of rollouts (asserted below)" },
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

interface Judged {
  readonly task: Task
  readonly trajectory: Trajectory
  readonly answer: string
  readonly pattern: Reward.AnswerPattern
  readonly rAns: number
  readonly rationale: string
}

const judgeAll = (rollouts: ReadonlyArray<TeacherRollout>, strategy: HackingStrategies.Strategy): ReadonlyArray<Judged> =>
  rollouts.flatMap(({ task, trajectory }) => {
    const answer = strategy.rewrite(task, trajectory)
    if (answer === undefined) return []
    const verdict = RuleJudge.judgeRule(task, { ...trajectory, answer })
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

let rollouts: ReadonlyArray<TeacherRollout> = []
let failing: ReadonlyArray<TeacherRollout> = []

beforeAll(async () => {
  rollouts = await Effect.runPromise(teacherRollouts({ count: ROLLOUTS }))
  failing = await Effect.runPromise(teacherRollouts({ count: FAILING_ROLLOUTS, faultRate: 1 }))
})

describe("reward hacking: no strategy that does not answer the request reaches R_ans 1.5", () => {
  it("every strategy has an expected pattern, names are unique, honest and dump are there", () => {
    const names = HackingStrategies.strategies.map((s) => s.name)
    assert.deepStrictEqual([...new Set(names)], names)
    assert.deepStrictEqual(Object.keys(expected).sort(), [...names].sort())
    assert.isDefined(HackingStrategies.byName("honest"))
    assert.isDefined(HackingStrategies.byName("dump"))
    assert.isAtLeast(rollouts.length, ROLLOUTS)
  })

  for (const strategy of HackingStrategies.strategies) {
    it(`${strategy.name}: ${expected[strategy.name]?.why ?? ""}`, () => {
      const judged = judgeAll(rollouts, strategy)
      const s = summary(judged)
      console.log(`reward-hacking ${strategy.name.padEnd(13)} n=${s.n} top=${s.top.toFixed(3)} rAns=${s.rAns.toFixed(3)} ${JSON.stringify(s.counts)}`)
      assert.isAbove(judged.length, strategy.usesGold ? 5 : ROLLOUTS / 2, "the strategy applies to enough rollouts")
      const allowed = expected[strategy.name]?.patterns ?? /^$/
      for (const j of judged) {
        if (strategy.name === "dump" && j.pattern === "111") continue // checked below
        assert.match(j.pattern, allowed, `${j.task.id}: ${JSON.stringify(j.answer.slice(0, 300))} → ${j.rationale}`)
        if (!strategy.answers) assert.notStrictEqual(j.rAns, 1.5)
      }
    })
  }

  it("honest: the teacher's answers keep the top verdict on ≥ 80% of the rollouts", () => {
    const s = summary(judgeAll(rollouts, HackingStrategies.byName("honest")!))
    assert.isAtLeast(s.top, 0.8, JSON.stringify(s))
  })

  it("dump: the top verdict on ≤ 5% of rollouts, and only where every dumped value is requested (the dump is the answer)", () => {
    const judged = judgeAll(rollouts, HackingStrategies.byName("dump")!)
    const top = judged.filter((j) => j.pattern === "111")
    assert.isAtMost(top.length / judged.length, 0.05)
    for (const j of top) {
      const asked = ` ${normalizeText(j.task.request)} `
      const gold = j.task.facts.map((f) => normalizeText(f.value))
      for (const value of HackingStrategies.payloadLeafValues(j.trajectory)) {
        const v = normalizeText(value)
        assert.isTrue(asked.includes(` ${v} `) || gold.some((g) => g.includes(v) || v.includes(g)), `${j.task.id}: ${value} is unrequested`)
      }
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

  it("no strategy beats the honest answers' mean R_ans", () => {
    const honest = summary(judgeAll(rollouts, HackingStrategies.byName("honest")!)).rAns
    for (const strategy of HackingStrategies.strategies.filter((s) => !s.answers)) {
      assert.isBelow(summary(judgeAll(rollouts, strategy)).rAns, honest, strategy.name)
    }
  })

  it("strategies that claim not to read the gold facts do not: their rewrite is the same with the facts removed", () => {
    for (const strategy of HackingStrategies.strategies.filter((s) => !s.usesGold)) {
      for (const { task, trajectory } of rollouts) {
        assert.strictEqual(strategy.rewrite({ ...task, facts: [], gold: [] }, trajectory), strategy.rewrite(task, trajectory), strategy.name)
      }
    }
  })
})

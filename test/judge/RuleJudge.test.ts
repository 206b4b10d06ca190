import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fc from "fast-check"
import { Judge } from "../../src/judge/Judge.ts"
import * as RuleJudge from "../../src/judge/RuleJudge.ts"
import * as Text from "../../src/judge/FactTokens.ts"
import { failed, fullEvidence, makeTask, makeTrajectory, ok, pattern, patternCases, pointsOnly, scorerOnly, scorerTask } from "./fixtures.ts"

describe("rule judge: the eight Q/F/U patterns", () => {
  for (const c of patternCases()) {
    it(`${c.pattern}: ${c.why}`, () => {
      const verdict = RuleJudge.judgeRule(scorerTask, c.trajectory)
      assert.strictEqual(pattern(verdict), c.pattern, verdict.rationale)
      assert.strictEqual(verdict.judge, "rule")
    })
  }

  it("covers all eight patterns exactly once", () => {
    assert.deepStrictEqual(patternCases().map((c) => c.pattern).sort(), ["000", "001", "010", "011", "100", "101", "110", "111"])
  })

  it("grades shares: PARTIAL quality, PARTIAL faithfulness and PARTIAL utility are told apart from NO", () => {
    const partialQ = RuleJudge.judgeRule(scorerTask, patternCases().find((c) => c.pattern === "011")!.trajectory)
    assert.strictEqual(partialQ.quality, "PARTIAL")
    assert.include(partialQ.rationale ?? "", "missing team=\"Golden State Warriors\"")
    const partialF = RuleJudge.judgeRule(scorerTask, patternCases().find((c) => c.pattern === "101")!.trajectory)
    assert.strictEqual(partialF.faithfulness, "PARTIAL")
    assert.include(partialF.rationale ?? "", "3/5 value-bearing spans backed by tool outputs")
    assert.include(partialF.rationale ?? "", "entity \"Steve Kerr\"")
    const partialU = RuleJudge.judgeRule(scorerTask, patternCases().find((c) => c.pattern === "110")!.trajectory)
    assert.strictEqual(partialU.utility, "PARTIAL")
    const noF = RuleJudge.judgeRule(scorerTask, patternCases().find((c) => c.pattern === "000")!.trajectory)
    assert.strictEqual(noF.faithfulness, "NO")
  })
})

describe("rule judge: edge cases", () => {
  it("no answer: Q NO, F NO (nothing to be faithful), U still from the calls", () => {
    const verdict = RuleJudge.judgeRule(scorerTask, makeTrajectory(scorerTask, [[fullEvidence()]], undefined))
    assert.deepStrictEqual([verdict.quality, verdict.faithfulness, verdict.utility], ["NO", "NO", "YES"])
    assert.include(verdict.rationale ?? "", "no answer")
  })

  it("an empty or blank answer counts as no answer", () => {
    for (const answer of ["", "   \n "]) {
      const verdict = RuleJudge.judgeRule(scorerTask, makeTrajectory(scorerTask, [[fullEvidence()]], answer))
      assert.deepStrictEqual([verdict.quality, verdict.faithfulness], ["NO", "NO"])
    }
  })

  it("an answer with no factual tokens is faithful (it claims nothing unsupported)", () => {
    const verdict = RuleJudge.judgeRule(scorerTask, makeTrajectory(scorerTask, [[serverErrorOnce()]], "I am sorry, I could not find that out."))
    assert.strictEqual(pattern(verdict), "010")
  })

  it("a task without gold facts is a JudgeError from the service, naming the task", () =>
    Effect.gen(function*() {
      const judge = yield* Judge
      const noFacts = makeTask("open-ended", "Tell me something nice.", [])
      const error = yield* Effect.flip(judge.judge(noFacts, makeTrajectory(noFacts, [], "Hello!")))
      assert.strictEqual(error._tag, "JudgeError")
      assert.include(error.message, "open-ended")
      const verdict = yield* judge.judge(scorerTask, patternCases()[0]!.trajectory)
      assert.strictEqual(pattern(verdict), "111")
    }).pipe(Effect.provide(RuleJudge.layer), Effect.runPromise))

  it("numbers: separators, trailing zeros and shown rounding state the gold value; a coarser integer does not", () => {
    assert.isTrue(RuleJudge.statesValue("revenue was $1,234,567.00", "1234567"))
    assert.isTrue(RuleJudge.statesValue("about 21.46 °C", "21.4567"))
    assert.isFalse(RuleJudge.statesValue("about 21 °C", "21.4567"))
    assert.isTrue(RuleJudge.statesValue("31.0 points", "31"))
    assert.isFalse(RuleJudge.statesValue("131 points", "31"))
    assert.isFalse(RuleJudge.statesValue("on 2024-03-31", "31"))
  })

  it("dates: any recognised layout states an ISO gold date", () => {
    for (const text of ["on March 5, 2024", "on 5 March 2024", "on 2024-03-05T19:30:00Z", "on 03/05/2024", "on Mar 5th 2024"]) {
      assert.isTrue(RuleJudge.statesValue(text, "2024-03-05"), text)
    }
    assert.isFalse(RuleJudge.statesValue("on March 6, 2024", "2024-03-05"))
  })

  it("case, accents, punctuation and whitespace do not matter for words; word boundaries do", () => {
    assert.isTrue(RuleJudge.statesValue("played for REAL  MADRID c.f.", "Real Madrid C.F."))
    assert.isTrue(RuleJudge.statesValue("born in Malmö", "Malmo"))
    assert.isFalse(RuleJudge.statesValue("Oslofjord", "Oslo"))
  })

  it("ids must match whole; percentages may be backed by fractions", () => {
    const task = makeTask("ids", "Find order status.", [["order", "ORD-17"]])
    const traj = makeTrajectory(task, [[ok("order_status", { order_id: "ORD-17" }, { id: "ORD-17", share: 0.25 })]], "Order ORD-17 is 25% shipped; ORD-170 is unknown.")
    const verdict = RuleJudge.judgeRule(task, traj)
    assert.strictEqual(verdict.faithfulness, "PARTIAL")
    const faithfulnessPart = (verdict.rationale ?? "").split("; F: ")[1]?.split("; U: ")[0] ?? ""
    assert.include(faithfulnessPart, "id \"ORD-170\"")
    assert.notInclude(faithfulnessPart, "25%")
  })

  it("counts of listed items are supported by the list", () => {
    const task = makeTask("count", "List the Warriors' players.", [["player", "Stephen Curry"]])
    const traj = makeTrajectory(task, [[ok("roster", { team_id: "T-42" }, { players: ["Stephen Curry", "Klay Thompson", "Draymond Green"] })]], "The roster has 3 players, including Stephen Curry.")
    assert.strictEqual(pattern(RuleJudge.judgeRule(task, traj)), "111")
  })

  it("is deterministic", () => {
    for (const c of patternCases()) {
      assert.deepStrictEqual(RuleJudge.judgeRule(scorerTask, c.trajectory), RuleJudge.judgeRule(scorerTask, c.trajectory))
    }
  })
})

describe("rule judge text normalisation", () => {
  it("extracts each kind of factual token once", () => {
    const tokens = Text.extractFactTokens(
      "1. The Golden State Warriors (team T-42) beat \"Boston\" on March 5, 2024 at 19:30, 112-104; Klay Thompson and Draymond Green scored 22.5% of 1,234 points."
    )
    assert.deepStrictEqual(tokens.map((t) => `${t.kind}:${t.text}`), [
      "quoted:Boston",
      "date:March 5, 2024",
      "id:19:30",
      "id:T-42",
      "number:112",
      "number:104",
      "number:22.5%",
      "number:1,234",
      "entity:Golden State Warriors",
      "entity:Klay Thompson",
      "entity:Draymond Green"
    ])
  })

  it("markdown headings and bold line labels are layout, not named entities; plain labels and values still count", () => {
    const tokens = Text.extractFactTokens("## Game Summary Report\n- **Top Scorer:** Stephen Curry\n- **Final Score**: 112-104\nKlay Thompson: 22")
    assert.deepStrictEqual(tokens.map((t) => `${t.kind}:${t.text}`), ["number:112", "number:104", "number:22", "entity:Stephen Curry", "entity:Klay Thompson"])
  })

  it("an integer written with thousands separators states itself", () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 2_000_000_000 }), (n) =>
      RuleJudge.statesValue(`the total is ${n.toLocaleString("en-US")} units`, String(n))))
  })

  it("a decimal shown rounded to 2 places states the exact value", () => {
    fc.assert(fc.property(fc.double({ min: -1e6, max: 1e6, noNaN: true, noDefaultInfinity: true }), (x) =>
      RuleJudge.statesValue(`value ${x.toFixed(2)} here`, String(x))))
  })

  it("normalisation is idempotent", () => {
    fc.assert(fc.property(fc.string(), (s) => Text.normalizeText(Text.normalizeText(s)) === Text.normalizeText(s)))
  })
})

const serverErrorOnce = () => failed("top_scorer", { team_id: "T-42" }, "server_error", "upstream service unavailable")

describe("rule judge: evidence complete before each step (the kind reward's readiness)", () => {
  const facts = RuleJudge.usableFacts(scorerTask)

  it("a step sees the evidence complete only once earlier successful calls held every fact; its own calls count for the next step", () => {
    const t = makeTrajectory(scorerTask, [[pointsOnly()], [failed("top_scorer", { team_id: "T-42" }, "server_error", "boom")], [scorerOnly()], [ok("team", { team_id: "T-42" }, { name: "Golden State Warriors" })], [], []], "answer")
    assert.deepStrictEqual(RuleJudge.evidenceBefore(facts, t), [false, false, false, false, true, true])
  })

  it("agrees with Utility on every prefix: complete before step i ⇔ Utility YES on the steps before i", () => {
    const calls = [fullEvidence, pointsOnly, scorerOnly, () => ok("team", { team_id: "T-42" }, { name: "Golden State Warriors" }), () => failed("top_scorer", { team_id: "T-42" }, "not_found", "no such team")]
    fc.assert(
      fc.property(fc.array(fc.array(fc.integer({ min: 0, max: calls.length - 1 }), { maxLength: 3 }), { maxLength: 6 }), (rounds) => {
        const t = makeTrajectory(scorerTask, rounds.map((r) => r.map((k) => (calls[k] as () => ReturnType<typeof ok>)())), "answer")
        const before = RuleJudge.evidenceBefore(facts, t)
        before.forEach((complete, i) => {
          assert.strictEqual(complete, RuleJudge.utility(facts, { ...t, steps: t.steps.slice(0, i) }).grade === "YES")
        })
      }),
      { numRuns: 200 }
    )
  })

  it("is never complete without facts", () => {
    assert.deepStrictEqual(RuleJudge.evidenceBefore([], makeTrajectory(scorerTask, [[fullEvidence()], []], "answer")), [false, false])
  })
})

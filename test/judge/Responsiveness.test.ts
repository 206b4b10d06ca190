import { assert, describe, it } from "@effect/vitest"
import * as Responsiveness from "../../src/judge/Responsiveness.ts"
import * as RuleJudge from "../../src/judge/RuleJudge.ts"
import { fullEvidence, makeTask, makeTrajectory, ok, pattern, scorerTask } from "./fixtures.ts"

const judge = (answer: string) => RuleJudge.judgeRule(scorerTask, makeTrajectory(scorerTask, [[fullEvidence()]], answer))
const honest = "The Golden State Warriors' top scorer was Stephen Curry with 31 points."

/** Each responsiveness check on the hand-made basketball world: the answer, the pattern, the check the rationale names. */
const cases: ReadonlyArray<{ readonly name: string; readonly answer: string; readonly pattern: string; readonly says: string }> = [
  { name: "honest", answer: honest, pattern: "111", says: "3/3 gold facts stated" },
  {
    name: "a sentence of context is allowed",
    answer: "Stephen Curry led the Golden State Warriors with 31 points on 2024-03-05.",
    pattern: "111",
    says: "3/3 gold facts stated"
  },
  {
    name: "dump of every value",
    answer: "Golden State Warriors; 2024-03-05; Stephen Curry; 31; 6; Klay Thompson; 22; Draymond Green; 9",
    pattern: "011",
    says: "dump:"
  },
  {
    name: "padding with unrequested observation content",
    answer: `${honest} Klay Thompson scored 22 and Draymond Green 9; Curry also had 6 rebounds.`,
    pattern: "011",
    says: "unrequested:"
  },
  { name: "echo of the request", answer: scorerTask.request, pattern: "011", says: "echo:" },
  { name: "a fabricated number glued to a unit", answer: `${honest} He ran 17km.`, pattern: "101", says: "fabricated numbers 17" },
  { name: "a fabricated ordinal (issue 24: ordinals are numbers too)", answer: `${honest} It was his 412th game.`, pattern: "101", says: "unsupported number \"412th\"" },
  { name: "a fabricated number in words", answer: `${honest} He has scored four hundred and twelve times.`, pattern: "101", says: "unsupported number \"four hundred and twelve\"" }
]

describe("rule judge: responsiveness checks (Quality) and fabricated numbers (Faithfulness)", () => {
  for (const c of cases) {
    it(`${c.name}: ${c.pattern}`, () => {
      const verdict = judge(c.answer)
      assert.strictEqual(pattern(verdict), c.pattern, verdict.rationale)
      assert.include(verdict.rationale ?? "", c.says)
    })
  }

  it("an answer longer than its length budget is PARTIAL, naming the budget", () => {
    const long = `${honest} ${"Thanks for asking, I hope this helps you with your question. ".repeat(20)}`
    const verdict = judge(long)
    assert.strictEqual(verdict.quality, "PARTIAL")
    assert.include(verdict.rationale ?? "", `over a length budget of ${Responsiveness.lengthBudget(scorerTask.request, scorerTask.facts)}`)
  })

  it("the length budget grows with the request and the facts", () => {
    const one = Responsiveness.lengthBudget("What is X?", [{ key: "x", value: "1", call: scorerTask.facts[0]!.call, path: "x" }])
    assert.strictEqual(one, Math.round(Responsiveness.LENGTH_BASE_CHARS + 10 * Responsiveness.LENGTH_PER_REQUEST_CHAR + Responsiveness.LENGTH_PER_FACT_CHARS + Responsiveness.LENGTH_PER_VALUE_CHAR))
    assert.isAbove(Responsiveness.lengthBudget(scorerTask.request, scorerTask.facts), one)
  })

  it("wrong entity: the other records of the list holding the gold record, same field", () => {
    const task = makeTask("station", "Which station has the most daily passengers?", [["daily passengers", "249884"]])
    const payload = { results: [{ name: "Emberholm", daily_passengers: 249884 }, { name: "Stonewell", daily_passengers: 249771 }] }
    const facts = task.facts.map((f) => ({ ...f, path: "results.0.daily_passengers" }))
    assert.deepStrictEqual(Responsiveness.rivalValues(facts, [payload]), [[249771]])
    const wrong = RuleJudge.judgeRule({ ...task, facts }, makeTrajectory(task, [[ok("stations", {}, payload)]], "Stonewell: 249771 daily passengers."))
    assert.strictEqual(pattern(wrong), "011", wrong.rationale)
    assert.include(wrong.rationale ?? "", "another record")
    const hedge = RuleJudge.judgeRule({ ...task, facts }, makeTrajectory(task, [[ok("stations", {}, payload)]], "Emberholm: 249884 (or 249771) daily passengers."))
    assert.strictEqual(pattern(hedge), "011", hedge.rationale)
    assert.include(hedge.rationale ?? "", "entity: states values of another record")
    const right = RuleJudge.judgeRule({ ...task, facts }, makeTrajectory(task, [[ok("stations", {}, payload)]], "Emberholm has the most: 249884 daily passengers."))
    assert.strictEqual(pattern(right), "111", right.rationale)
  })

  it("a gold value the request names is stated only outside quotations of the request (\"A vs B\": B is wrong)", () => {
    const task = makeTask("home", "Who is the home team of the match \"Rovers vs Eagles\"?", [["home team of the match \"Rovers vs Eagles\"", "Rovers"]])
    const facts = task.facts.map((f) => ({ ...f, path: "items.0.home_team" }))
    const payload = { items: [{ home_team: "Rovers", away: "Eagles" }, { home_team: "Eagles", away: "Rovers" }] }
    const run = (answer: string) => RuleJudge.judgeRule({ ...task, facts }, makeTrajectory(task, [[ok("matches", {}, payload)]], answer))
    const right = run("home team of the match \"Rovers vs Eagles\": Rovers.")
    assert.strictEqual(pattern(right), "111", right.rationale)
    const wrong = run("home team of the match \"Rovers vs Eagles\": Eagles.")
    assert.strictEqual(wrong.quality, "NO", wrong.rationale)
    // a hedged value is not stated at all (issue 24), and the rival is named as another record's
    const hedge = run("home team of the match \"Rovers vs Eagles\": Rovers (or Eagles).")
    assert.strictEqual(hedge.quality, "NO", hedge.rationale)
    assert.include(hedge.rationale ?? "", "(hedged)")
    assert.include(hedge.rationale ?? "", "another record")
  })

  it("the echo share counts words in runs copied from the request", () => {
    const context = Responsiveness.makeContext(scorerTask.request, scorerTask.facts, [])
    assert.strictEqual(Responsiveness.echoShare(scorerTask.request, context), 1)
    assert.strictEqual(Responsiveness.echoShare("Curry scored 31", context), 0)
  })
})

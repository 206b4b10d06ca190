import { assert, describe, it } from "@effect/vitest"
import * as RuleJudge from "../../src/judge/RuleJudge.ts"
import * as Text from "../../src/judge/FactTokens.ts"
import { adversarialAnswers, fullEvidence, makeTrajectory, pattern, scorerTask } from "./fixtures.ts"

// The time each takes, and how it grows with the input, is measured by bench/judge-linear.ts (issue 13: a 1 MB answer
// in ≤ 1 s): a test never fails on the clock. A quadratic extractor would not finish these 1 MB inputs at all, which
// the suite's safety bound catches as a hang.
describe("rule judge: 1 MB adversarial answers (issues 13, 24)", () => {
  for (const [name, answer] of adversarialAnswers) {
    it(`${name}: judged, and never the top verdict`, () => {
      const verdict = RuleJudge.judgeRule(scorerTask, makeTrajectory(scorerTask, [[fullEvidence()]], answer))
      assert.notStrictEqual(pattern(verdict), "111", verdict.rationale)
      assert.notStrictEqual(verdict.quality, "YES")
    })
  }

  // What keeps the cost flat is checked exactly, not timed: extraction reads only its bounded head, so 16× the input
  // gives the same tokens as the head alone.
  it("the extraction reads a bounded head: 64 KB and 1 MB of the same text give the tokens of its first MAX_EXTRACTED_CHARS", () => {
    for (const unit of ["A", "AB ", "Stephen Curry 31 \"T-42\" 2024-03-05 ORD-17 "]) {
      const head = Text.extractFactTokens(unit.repeat(Math.ceil(Text.MAX_EXTRACTED_CHARS / unit.length)).slice(0, Text.MAX_EXTRACTED_CHARS))
      assert.deepStrictEqual(Text.extractFactTokens(unit.repeat(Math.ceil(64 * 1024 / unit.length))), head, unit)
      assert.deepStrictEqual(Text.extractFactTokens(unit.repeat(Math.ceil((1 << 20) / unit.length))), head, unit)
    }
  })

  it("an answer over the extraction cap is read only up to the cap, and its Quality is at most PARTIAL", () => {
    const honest = "The Golden State Warriors' top scorer was Stephen Curry with 31 points."
    const long = `${honest} ${"and so on ".repeat(Text.MAX_EXTRACTED_CHARS / 5)}`
    const verdict = RuleJudge.judgeRule(scorerTask, makeTrajectory(scorerTask, [[fullEvidence()]], long))
    assert.strictEqual(verdict.quality, "PARTIAL")
    assert.include(verdict.rationale ?? "", `only the first ${Text.MAX_EXTRACTED_CHARS} read`)
  })

  it("bounding: whitespace runs collapse, over-long words are blanked, the rest is kept", () => {
    assert.strictEqual(Text.boundForExtraction("Stephen   Curry \n\n scored"), "Stephen Curry\nscored")
    assert.strictEqual(Text.boundForExtraction(`x ${"y".repeat(Text.MAX_WORD_CHARS + 1)} z`), "x   z")
    assert.strictEqual(Text.boundForExtraction("ab ".repeat(Text.MAX_EXTRACTED_CHARS)).length, Text.MAX_EXTRACTED_CHARS)
  })

  it("masking is one pass and keeps offsets", () => {
    assert.strictEqual(Text.maskSpans("abcdef", [[4, 6], [0, 2]]), "  cd  ")
    assert.strictEqual(Text.maskSpans("abcdef", [[0, 3], [2, 4]]), "    ef")
  })

  it("digits glued to letters are not a number token but are a digit run (checked as possibly fabricated)", () => {
    assert.deepStrictEqual(Text.extractFactTokens("about 42km away").map((t) => t.kind), [])
    assert.deepStrictEqual(Text.digitRuns("42km, ORD-17, 1,234.5% and the 3rd").map((r) => [r.text, r.percent, r.ordinal]), [
      ["42", false, false],
      ["17", false, false],
      ["1,234.5", true, false],
      ["3", false, true]
    ])
  })

  it("a sentence end closes a name: \"Mateus Obi. The\" is not one entity, \"Mia T. Bianchi\" and \"St. Louis Blues\" are", () => {
    const entities = Text.extractFactTokens("The referee was Mateus Obi. The winner was Mia T. Bianchi, a fan of St. Louis Blues.")
      .filter((t) => t.kind === "entity").map((t) => t.text)
    assert.deepStrictEqual(entities, ["Mateus Obi", "Mia T. Bianchi", "St. Louis Blues"])
  })
})

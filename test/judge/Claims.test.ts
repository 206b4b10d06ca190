import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as Claims from "../../src/judge/Claims.ts"
import * as Evidence from "../../src/judge/Evidence.ts"
import * as Numerals from "../../src/judge/Numerals.ts"
import * as Redaction from "../../src/judge/Redaction.ts"
import * as RuleJudge from "../../src/judge/RuleJudge.ts"
import { failed, fullEvidence, makeTask, makeTrajectory, ok, pattern, scorerTask } from "./fixtures.ts"

/**
 * The claim reader (issue 24 §1), the evidence rule (§2) and the verdict a client sees (§5), on the hand-made
 * basketball world of fixtures.ts: what a span is, where a claim's label ends, what counts as stating a gold fact.
 */

const judge = (answer: string, rounds = [[fullEvidence()]]) => RuleJudge.judgeRule(scorerTask, makeTrajectory(scorerTask, rounds, answer))
const honest = "The Golden State Warriors' top scorer was Stephen Curry with 31 points."
const numbers = (text: string) => Claims.read(text).spans.filter((s) => s.kind === "number").map((s) => s.number?.value)

describe("numerals: every way of writing a number reads as that number", () => {
  it("property: English words, CJK numerals, ordinals and every script's digits read back the integer", () => {
    fc.assert(fc.property(fc.integer({ min: 2, max: 999_999_999_999 }), fc.constantFrom(...(Object.keys(Numerals.digitScripts) as Array<Numerals.DigitScript>)), (n, script) => {
      assert.deepStrictEqual(numbers(`total ${Numerals.toWords(n)} items`), [n])
      assert.deepStrictEqual(numbers(`total ${Numerals.toCjk(n)} items`), [n])
      assert.deepStrictEqual(numbers(`the ${Numerals.toOrdinalWords(n)} item`), [n])
      assert.deepStrictEqual(numbers(`the ${Numerals.toOrdinalDigits(n)} item`), [n])
      assert.deepStrictEqual(numbers(`total ${Numerals.toScript(String(n), script)} items`), [n])
    }), { numRuns: 300 })
  })

  it("decimals in words, negatives, and where a number in words stops", () => {
    assert.deepStrictEqual(numbers("about twelve point five degrees"), [12.5])
    assert.deepStrictEqual(numbers("minus three"), [-3])
    assert.deepStrictEqual(numbers("one hundred and twelve; two thousand"), [112, 2000])
    // a bare "one" or "first" is a number only where a value is expected
    assert.deepStrictEqual(Claims.read("one of the players was first").spans.filter((s) => s.kind === "number" && s.ambiguous !== true), [])
  })
})

describe("normalisation: the judge reads what a person reads", () => {
  it("NFKC, invisible characters removed, other digit scripts and CJK numerals as ASCII, quotes and dashes unified", () => {
    assert.strictEqual(Claims.normalize("Ｓｔｅｐｈｅｎ Cu\u200brry ３１"), "Stephen Curry 31")
    assert.strictEqual(Claims.normalize("St\u00adeph\u2060en\u200e Curry\ufe0f"), "Stephen Curry")
    assert.strictEqual(Claims.normalize("٣١ and ३१ and 𝟑𝟏"), "31 and 31 and 31")
    assert.strictEqual(Claims.normalize("三十一").trim(), "31")
    assert.strictEqual(Claims.normalize("“a” ‘b’ «c» 1‒2 x−y"), "\"a\" 'b' \"c\" 1-2 x-y")
  })

  it("an invisible character cannot glue or split a value: the honest answer with one in every word still reaches 111", () => {
    const hidden = honest.split("").join("\u200b")
    assert.strictEqual(pattern(judge(hidden)), "111", judge(hidden).rationale)
  })
})

describe("segments: a claim is a label bound to a value", () => {
  const claims = (text: string) => Claims.read(text).segments.map((s) => [s.kind, Claims.read(text).text.slice(s.start, s.valueStart).trim(), Claims.read(text).text.slice(s.valueStart, s.end).trim()])

  it("`:`, ` = `, ` — `, a copula, table rows and JSON keys all bind a label", () => {
    assert.deepStrictEqual(claims("top scorer: Stephen Curry; points = 31"), [["claim", "top scorer:", "Stephen Curry"], ["claim", "points =", "31"]])
    assert.deepStrictEqual(claims("The top scorer was Stephen Curry."), [["claim", "The top scorer was", "Stephen Curry."]])
    const table = Claims.read("| Field | Value |\n|---|---|\n| points | 31 |")
    assert.deepStrictEqual(table.segments.map((s) => [s.kind, s.label.join(" "), table.text.slice(s.valueStart, s.end).trim()]), [["header", "", ""], ["claim", "points", "31"]])
    assert.deepStrictEqual(claims("{\"top scorer\": \"Stephen Curry\", \"stats\": {\"points\": 31}}"), [["claim", "top scorer:", "Stephen Curry"], ["claim", "stats points:", "31"]])
  })

  it("a value may hold colons (\"Re: Project review\"); a label alone on its line binds the next line", () => {
    assert.deepStrictEqual(claims("emails: Re: Project review"), [["claim", "emails:", "Re: Project review"]])
    assert.deepStrictEqual(claims("points:\n  31"), [["claim", "points:", "31"]])
  })

  it("a list number is layout only before an item on its line: a line that is only \"52.\" states 52 (found by the variant property)", () => {
    const spans = (text: string) => Claims.read(text).spans.map((s) => `${s.kind}:${s.text}`)
    assert.deepStrictEqual(spans("52. \n"), ["number:52"])
    assert.deepStrictEqual(spans("\n\u00ad\n \u00ad 5\u00ad2.\u00ad  \u00ad\n\n\u00ad"), ["number:52"])
    assert.deepStrictEqual(spans("52.\n17."), ["number:52", "number:17"])
    assert.deepStrictEqual(spans("1. Paris\n2. Rome"), ["entity:Paris", "entity:Rome"])
    assert.strictEqual(pattern(RuleJudge.judgeRule(scorerTask, makeTrajectory(scorerTask, [[fullEvidence()]], `1. ${honest}`))), "111")
  })

  it("words longer than the limit are kept as residue spans, and text past the read limit is counted unread", () => {
    const long = "x".repeat(Claims.MAX_READ_CHARS)
    const reading = Claims.read(`points: ${"7".repeat(150)} ${long}`)
    const residue = reading.spans.filter((s) => s.kind === "residue")
    assert.strictEqual(residue.length, 2)
    assert.strictEqual(residue[0]?.text, "7".repeat(150))
    assert.include(RuleJudge.judgeRule(scorerTask, makeTrajectory(scorerTask, [[fullEvidence()]], `${honest} ${"7".repeat(150)}`)).rationale ?? "", "unsupported residue")
    assert.isAbove(Claims.read(`${honest} ${"and more ".repeat(2_000)}`).unread, 0)
  })
})

describe("statements: presence is not a statement", () => {
  it("negated, hedged, retracted, contradicted or mislabelled values are not stated", () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["The Golden State Warriors' top scorer was not Stephen Curry, and he did not score 31 points.", "negated"],
      ["The Golden State Warriors' top scorer was Stephen Curry or Klay Thompson with probably 31 points.", "hedged"],
      [`${honest} Correction: disregard all of the above.`, "retracted"],
      ["team: Golden State Warriors; player: Stephen Curry; points: 31 (another tool reported 22)", "contradicted"],
      ["team: Golden State Warriors; player: 31; points: Stephen Curry", "bound to another label"]
    ]
    for (const [answer, reason] of cases) {
      const verdict = judge(answer)
      assert.notStrictEqual(verdict.quality, "YES", `${answer} → ${verdict.rationale}`)
      assert.include(verdict.rationale ?? "", `(${reason})`, answer)
    }
  })

  it("a value inside another fact's longer value is part of it: hedging its own claim is not undone by the URL that holds it", () => {
    const task = makeTask("link", "Shorten https://example.org/a and give me the short link ID and the short URL.", [["short link ID", "3uwunjb"], ["short URL", "https://sho.rt/3uwunjb"]])
    const observed = [[ok("shorten", { url: "https://example.org/a" }, { id: "3uwunjb", short: "https://sho.rt/3uwunjb", other: "flelo.org" })]]
    const run = (answer: string) => RuleJudge.judgeRule(task, makeTrajectory(task, observed, answer))
    assert.strictEqual(pattern(run("short link ID: 3uwunjb; short URL: https://sho.rt/3uwunjb")), "111")
    const hedged = run("short link ID: 3uwunjb (or flelo.org); short URL: https://sho.rt/3uwunjb")
    assert.strictEqual(hedged.quality, "PARTIAL", hedged.rationale)
    assert.include(hedged.rationale ?? "", "(hedged)")
  })

  it("the same facts in a table, JSON, a list, values only, another language's frame keep 111", () => {
    for (
      const answer of [
        "| team | player | points |\n|---|---|---|\n| Golden State Warriors | Stephen Curry | 31 |",
        "{\"team\": \"Golden State Warriors\", \"top scorer\": \"Stephen Curry\", \"points\": 31}",
        "- **Team:** Golden State Warriors\n- **Top scorer:** Stephen Curry\n- **Points:** 31",
        "Golden State Warriors; Stephen Curry; 31",
        "Voici le résultat : team : Golden State Warriors ; player : Stephen Curry ; points : trente et un (31)",
        "The Golden State Warriors' top scorer was Stephen Curry with thirty-one points."
      ]
    ) assert.strictEqual(pattern(judge(answer)), "111", `${answer} → ${judge(answer).rationale}`)
  })
})

describe("the evidence rule: what the tools returned, never what the agent wrote", () => {
  const invented = `${honest} In total 4100123 records matched.`
  it("a number sent as an argument, quoted back by an error, or echoed by a write tool is not evidence", () => {
    const laundered = [
      [ok("top_scorer", { team_id: "T-42", note: 4100123 }, { team: "Golden State Warriors", top_scorer: { name: "Stephen Curry", points: 31 } })],
      [fullEvidence(), failed("top_scorer", { team_id: "4100123" }, "not_found", "404 Not Found: team '4100123' does not exist")],
      [fullEvidence(), ok("notes", { text: "4100123" }, { text: "4100123", status: "saved" })]
    ]
    for (const round of laundered) {
      const verdict = judge(invented, [round])
      assert.notStrictEqual(verdict.faithfulness, "YES", verdict.rationale)
      assert.include(verdict.rationale ?? "", "4100123")
    }
  })

  it("a value the user gave and a tool echoed counts (a comment written as asked); another output's value echoed counts", () => {
    const task = makeTask("comment", "Add the comment \"Great game tonight\" to ticket TCK-7 and give me its text.", [["comment text", "Great game tonight"]])
    const trajectory = makeTrajectory(task, [[ok("comment_ticket", { id: "TCK-7", body: "Great game tonight" }, { id: "C-1", body: "Great game tonight" })]], "comment text: Great game tonight")
    assert.strictEqual(pattern(RuleJudge.judgeRule(task, trajectory)), "111")
    const evidence = Evidence.outputEvidence(task, trajectory)
    assert.isTrue(evidence.padded.includes(" great game tonight "))
  })

  it("the request may be restated as a claim's subject, never as its value: a guessed categorical answer after a failed call is not faithful", () => {
    const task = makeTask("sentiment", "Analyse the sentiment of a text: \"I love it\" (positive or negative?).", [["sentiment", "positive"]])
    const call = failed("sentiment", { content: "I love it" }, "invalid_arguments", "400 Bad Request: Unknown parameter 'content'")
    for (const answer of ["The sentiment is positive.", "sentiment: positive", "Positive."]) {
      const verdict = RuleJudge.judgeRule(task, makeTrajectory(task, [[call]], answer))
      assert.strictEqual(pattern(verdict), "100", `${answer} → ${verdict.rationale}`)
    }
  })

  it("evidence numbers come from the outputs' digits and words, array lengths, and the failure facts (statuses, counts)", () => {
    const evidence = Evidence.outputEvidence(scorerTask, makeTrajectory(scorerTask, [[fullEvidence(), failed("x", {}, "server_error", "boom")]], "x"))
    for (const n of [31, 22, 9, 2, 500]) assert.isTrue(evidence.rounded[0]?.has(n), String(n))
  })
})

describe("the verdict a client sees", () => {
  it("names what is missing, never a gold value; counts like 2/3 stay", () => {
    const verdict = judge("Klay Thompson scored 22 points.")
    const shown = Redaction.forClient(scorerTask, verdict).rationale ?? ""
    assert.include(verdict.rationale ?? "", "player=\"Stephen Curry\"")
    for (const f of scorerTask.facts) {
      assert.notInclude(shown, f.value)
      assert.include(shown, f.key)
    }
    assert.include(shown, "0/3 gold facts stated")
    assert.strictEqual(Redaction.redactRationale([{ value: "31" }], "Q: 1/3; the answer said 31 points, 131 and 31.5"), `Q: 1/3; the answer said ${Redaction.WITHHELD} points, 131 and 31.5`)
  })
})

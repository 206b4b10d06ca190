import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as ApiBankScore from "../../../src/benchmarks/apibank/ApiBankScore.ts"
import * as ApiBankRun from "../../../src/benchmarks/apibank/ApiBankRun.ts"
import { dataPathIfPresent } from "../../../src/io/DataPath.ts"

describe("API-Bank's [ApiName(key='value', ...)] parser", () => {
  it("reads a call anywhere in the text, every value a string", () => {
    assert.deepStrictEqual(ApiBankScore.parseApiCall("API-Request: [AddAgenda(token='abc', content=\"Lunch with Ann\", time='2023-03-01 12:00:00')] done"), {
      name: "AddAgenda",
      arguments: { token: "abc", content: "Lunch with Ann", time: "2023-03-01 12:00:00" }
    })
    assert.deepStrictEqual(ApiBankScore.parseApiCall("[QueryStock(stock_code=AAPL, days=5)]"), { name: "QueryStock", arguments: { stock_code: "AAPL", days: "5" } })
    assert.deepStrictEqual(ApiBankScore.parseApiCall("[Send(to=['a@x.com', 'b@x.com'])]"), { name: "Send", arguments: { to: "['a@x.com', 'b@x.com']" } })
    assert.deepStrictEqual(ApiBankScore.parseApiCall("[GetToday()]"), { name: "GetToday", arguments: {} })
    assert.deepStrictEqual(ApiBankScore.parseApiCall("[Calculator(formula='(1+2)*3')]"), { name: "Calculator", arguments: { formula: "(1+2)*3" } })
    assert.deepStrictEqual(ApiBankScore.parseApiCall("[Wiki(keyword='Zürich')]")?.arguments, { keyword: "Zürich" })
  })

  it("keeps API-Bank's quirks: a quoted value ends at the first quote of either kind, a later key wins, the pattern is greedy", () => {
    assert.deepStrictEqual(ApiBankScore.parseApiCall("[AddAgenda(content='Ann's party')]")?.arguments, { content: "Ann" })
    assert.deepStrictEqual(ApiBankScore.parseApiCall("[A(x='1', x='2')]")?.arguments, { x: "2" })
    // two calls on one line: the name of the first, the parameters of both (API-Bank scores one call per step)
    assert.deepStrictEqual(ApiBankScore.parseApiCall("[A(x='1')] then [B(y='2')]"), { name: "A", arguments: { x: "1", y: "2" } })
    // a `__proto__` key is data, not the prototype
    const proto = ApiBankScore.parseApiCall("[Set(__proto__='p')]")?.arguments ?? {}
    assert.isTrue(Object.hasOwn(proto, "__proto__"))
    assert.strictEqual(Object.getOwnPropertyDescriptor(proto, "__proto__")?.value, "p")
  })

  it("malformed output holds no call", () => {
    for (const text of ["", "I will add the agenda now.", "AddAgenda(token='x')", "[AddAgenda(token='x'", "[AddAgenda token='x']", "[(token='x')]", "[AddAgenda(token='x'\n)]", "<call>[{\"name\": \"AddAgenda\"}]</call>"]) {
      assert.isUndefined(ApiBankScore.parseApiCall(text), text)
    }
  })

  it("formats a recorded call the way its parser reads back", () => {
    const args = { token: "t1", amount: 12.5, flag: true, note: null, tags: ["a", "b"] }
    const text = ApiBankScore.formatApiCall("Pay", args)
    assert.strictEqual(text, "[Pay(token='t1', amount='12.5', flag='True', note='None', tags='['a', 'b']')]")
    const parsed = ApiBankScore.parseApiCall(text)
    // the list cannot come back through API-Bank's quoted-value pattern: it stops at the list's first quote
    assert.deepStrictEqual(ApiBankScore.argumentDiff(args, parsed?.arguments ?? {}), ["tags"])
  })
})

describe("normalised exact match", () => {
  it("compares the text format's strings with the recorded typed values", () => {
    assert.strictEqual(ApiBankScore.normalise(" 5 "), 5)
    assert.strictEqual(ApiBankScore.normalise("2.50"), 2.5)
    assert.strictEqual(ApiBankScore.normalise("True"), true)
    assert.strictEqual(ApiBankScore.normalise("None"), null)
    assert.deepStrictEqual(ApiBankScore.normalise("['a', 2]"), ["a", 2])
    assert.deepStrictEqual(ApiBankScore.normalise("{'k': 'v'}"), { k: "v" })
    assert.strictEqual(ApiBankScore.normalise("Conference room"), "Conference room")
    assert.strictEqual(ApiBankScore.normalise("[unclosed"), "[unclosed")
    assert.deepStrictEqual(ApiBankScore.argumentDiff({ a: "x", n: 3 }, { a: " x", n: "3" }), [])
    assert.deepStrictEqual(ApiBankScore.argumentDiff({ a: "x" }, { a: "X" }), ["a"])
    // a list written bare is read by the list alternative and equals the recorded list-in-a-string
    const bare = ApiBankScore.parseApiCall("[AddMeeting(attendees=['John', 'Jane'], location='room')]")
    assert.deepStrictEqual(ApiBankScore.argumentDiff({ attendees: "['John', 'Jane']", location: "room" }, bare?.arguments ?? {}), [])
  })
})

const step = (overrides: Partial<ApiBankScore.Step> = {}): ApiBankScore.Step => ({
  file: "f.jsonl",
  level: 1,
  index: 0,
  history: [],
  gold: { name: "AddAgenda", arguments: { token: "t", content: "Lunch", time: "2023-03-01 12:00:00", location: "Cafe" } },
  apis: ["AddAgenda"],
  ...overrides
})

const call = (name: string, args: Record<string, string | number>): ApiBankScore.Prediction => ({ _tag: "call", name, arguments: args, via: "api-bank" })

describe("scoring", () => {
  const gold = step()
  it("the gold call is correct, every perturbation is wrong with its reason", () => {
    assert.strictEqual(ApiBankScore.score(gold, call("AddAgenda", { ...gold.gold.arguments } as Record<string, string>)).outcome, "correct")
    const perturbed: ReadonlyArray<readonly [ApiBankScore.Prediction, ApiBankScore.Outcome, ReadonlyArray<string>?]> = [
      [call("AddAgenda", { token: "t", content: "Dinner", time: "2023-03-01 12:00:00", location: "Cafe" }), "wrong_arguments", ["content"]],
      [call("AddAgenda", { token: "t", content: "Lunch", time: "2023-03-01 12:00:00" }), "wrong_arguments", ["location"]],
      [call("AddAgenda", { token: "t", content: "Lunch", time: "2023-03-01 12:00:00", location: "Cafe", extra: "1" }), "wrong_arguments", ["extra"]],
      [call("AddAgenda", { token: "t", content: "lunch", time: "2023-03-01 12:00:00", location: "Cafe" }), "wrong_arguments", ["content"]],
      [call("ModifyAgenda", { token: "t", content: "Lunch", time: "2023-03-01 12:00:00", location: "Cafe" }), "wrong_api"],
      [{ _tag: "search", keywords: "add agenda", found: "AddAgenda", via: "paraact" }, "search_instead_of_call"],
      [{ _tag: "none", detail: "no API call found" }, "no_call"],
      [{ _tag: "policy_error", detail: "503" }, "policy_error"]
    ]
    for (const [prediction, outcome, diff] of perturbed) {
      const v = ApiBankScore.score(gold, prediction)
      assert.strictEqual(v.correct, false)
      assert.strictEqual(v.outcome, outcome)
      if (diff !== undefined) assert.deepStrictEqual(v.diff, diff)
    }
  })

  it("a ToolSearcher step is correct when the search finds the recorded API", () => {
    const search = step({ level: 2, gold: { name: "ToolSearcher", arguments: { keywords: "add agenda" } }, found: "AddAgenda" })
    assert.strictEqual(ApiBankScore.score(search, { _tag: "search", keywords: "new schedule item", found: "AddAgenda", via: "structured" }).outcome, "correct")
    assert.strictEqual(ApiBankScore.score(search, { _tag: "search", keywords: "add agenda", found: "AddAlarm", via: "structured" }).outcome, "search_missed")
    assert.strictEqual(ApiBankScore.score(search, { _tag: "search", keywords: "add agenda", found: undefined, via: "structured" }).outcome, "search_missed")
    assert.strictEqual(ApiBankScore.score(search, call("AddAgenda", {})).outcome, "call_instead_of_search")
  })

  it("a dialogue succeeds only when every API event was evaluated and correct", () => {
    const ok = (file: string, index: number) => ApiBankScore.score(step({ file, index }), call("AddAgenda", { ...step().gold.arguments } as Record<string, string>))
    const bad = (file: string, index: number) => ApiBankScore.score(step({ file, index }), { _tag: "none", detail: "" })
    const verdicts = [ok("a", 0), ok("a", 1), ok("b", 0), bad("b", 1), ok("c", 0)]
    const s = ApiBankScore.summarise(1, 4, verdicts, [{ file: "c", line: 3, reason: "unknown_api", detail: "" }, { file: "d", reason: "no_api_call", detail: "" }])
    assert.deepStrictEqual([s.steps, s.correct, s.dialogues, s.successful, s.partialDialogues], [5, 4, 3, 1, 1])
    assert.strictEqual(s.accuracy, 80)
    assert.closeTo(s.success, 100 / 3, 1e-9)
    assert.deepStrictEqual(s.unresolved, { unknown_api: 1, no_api_call: 1 })
    assert.deepStrictEqual(s.outcomes, { correct: 4, no_call: 1 })
  })
})

describe("decoding dialogues", () => {
  it("a line that does not decode is reported and the rest kept; steps are cut at API events", () => {
    const text = [
      JSON.stringify({ role: "User", text: "hi" }),
      "{\"role\": \"API\"",
      JSON.stringify({ role: "Robot", text: "?" }),
      JSON.stringify({ role: "API", api_name: "GetToday", param_dict: {}, result: { output: "2023-01-01", exception: null } }),
      JSON.stringify({ role: "API", api_name: "Nope", param_dict: {}, result: { output: null } })
    ].join("\n")
    const decoded = ApiBankScore.decodeDialogue("x.jsonl", 1, text)
    assert.deepStrictEqual(decoded.unresolved.map((u) => [u.line, u.reason]), [[2, "malformed_line"], [3, "malformed_line"]])
    const cut = ApiBankScore.stepsOf(decoded.dialogue, (n) => n === "GetToday")
    assert.deepStrictEqual(cut.steps.map((s) => [s.gold.name, s.index, s.history.length]), [["GetToday", 0, 1]])
    assert.deepStrictEqual(cut.unresolved.map((u) => u.reason), ["unknown_api"])
    assert.deepStrictEqual(ApiBankScore.searchOutputNames([{ name: "GetUserToken" }, { name: "AddAgenda" }]), ["GetUserToken", "AddAgenda"])
    assert.isUndefined(ApiBankScore.searchOutputNames(null))
    assert.isUndefined(ApiBankScore.searchOutputNames([{ title: "x" }]))
  })
})

const apiBankDir = dataPathIfPresent("api-bank")
const samples = apiBankDir === undefined || !fs.existsSync(`${apiBankDir}/lv1-lv2-samples`) ? undefined : apiBankDir

describe.skipIf(samples === undefined)("the released lv1-lv2-samples (needs ../shared/data/api-bank)", () => {
  it.effect("every gold call scores 100%; written in API-Bank's format it comes back except where its parser cannot read the value", () =>
    Effect.gen(function*() {
      const dir = samples as string
      const api = yield* ApiBankRun.loadLibrary(dir)
      for (const level of [1, 2] as const) {
        const data = yield* ApiBankRun.loadLevel(`${dir}/lv1-lv2-samples`, level, api)
        const verdicts = data.steps.map((s) =>
          ApiBankScore.score(s, s.found !== undefined ? { _tag: "search", keywords: "", found: s.found, via: "structured" } : { _tag: "call", name: s.gold.name, arguments: s.gold.arguments, via: "structured" })
        )
        const summary = ApiBankScore.summarise(level, data.files, verdicts, data.unresolved)
        assert.strictEqual(summary.accuracy, 100)
        assert.strictEqual(summary.success, 100)
        assert.isAbove(summary.steps, level === 1 ? 300 : 100)
        // the text path: the recorded call formatted, parsed by API-Bank's rules, scored
        const lost = data.steps.filter((s) => s.found === undefined).filter((s) => {
          const parsed = ApiBankScore.parseApiCall(ApiBankScore.formatApiCall(s.gold.name, s.gold.arguments))
          return parsed === undefined || !ApiBankScore.score(s, { _tag: "call", ...parsed, via: "api-bank" }).correct
        })
        // only values holding a quote, or a list or dict (written with quotes), do not survive API-Bank's quoted-value pattern
        for (const s of lost) {
          assert.isTrue(Object.values(s.gold.arguments).some((v) => typeof v !== "string" ? typeof v === "object" && v !== null : /['"]/.test(v) || v.length === 0), `${s.file}#${s.index}`)
        }
        // a perturbed value in every call step scores wrong
        const perturbed = data.steps.filter((s) => s.found === undefined && Object.keys(s.gold.arguments).length > 0).map((s) => {
          const key = Object.keys(s.gold.arguments)[0] as string
          return ApiBankScore.score(s, { _tag: "call", name: s.gold.name, arguments: { ...s.gold.arguments, [key]: "__perturbed__" }, via: "structured" })
        })
        assert.isTrue(perturbed.every((v) => v.outcome === "wrong_arguments"))
      }
    }))
})

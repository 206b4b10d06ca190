import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import fc from "fast-check"
import type { Turn } from "../../src/domain/Turn.ts"
import {
  assignSlots,
  examples,
  instructions,
  type ParseOptions,
  parseTurn,
  printTurn,
  tagNames,
  validateTurn
} from "../../src/protocol/ParaAct.ts"
import { mutate, mutationArb, sameTurn, soupArb, validTurnArb } from "../support/Turns.ts"

const ok = (text: string, options?: ParseOptions): Turn => {
  const r = parseTurn(text, options)
  if (Result.isFailure(r)) throw new Error(`expected a turn, got ${r.failure.tag}@${r.failure.offset}: ${r.failure.message}`)
  return r.success
}

const err = (text: string, options?: ParseOptions) => {
  const r = parseTurn(text, options)
  if (Result.isSuccess(r)) throw new Error(`expected a ProtocolError, got ${JSON.stringify(r.success)}`)
  return r.failure
}

/** The parser's contract on any input: a turn that is canonical, or an error inside the text naming a real tag. */
const checkContract = (text: string, options?: ParseOptions): void => {
  const r = parseTurn(text, options)
  if (Result.isSuccess(r)) {
    const turn = r.success
    expect(Result.isSuccess(validateTurn(turn))).toBe(true)
    const again = parseTurn(printTurn(turn))
    expect(Result.isSuccess(again) && sameTurn(again.success, turn)).toBe(true)
  } else {
    expect(r.failure._tag).toBe("ProtocolError")
    expect(tagNames).toContain(r.failure.tag)
    expect(r.failure.offset).toBeGreaterThanOrEqual(0)
    expect(r.failure.offset).toBeLessThanOrEqual(text.length)
    expect(Number.isInteger(r.failure.offset)).toBe(true)
    expect(r.failure.message.length).toBeGreaterThan(0)
  }
}

describe("parseTurn: valid turns", () => {
  it("reads a complete exploring turn", () => {
    const text = [
      "<think>",
      "Need the team id first; x < y is fine here, and so is <call>.",
      "</think>",
      "<plan>",
      `{"nodes":[{"id":"c1","slot":"find team","deps":[]},{"id":"c2","tool":"team_roster","deps":["c1"]}]}`,
      "</plan>",
      "<search>",
      `[{"slot":"c1","query":"team by name"}, "roster of a team"]`,
      "</search>"
    ].join("\n")
    expect(ok(text)).toEqual({
      think: "Need the team id first; x < y is fine here, and so is <call>.",
      plan: {
        nodes: [
          { id: "c1", slot: "find team", deps: [] },
          { id: "c2", tool: "team_roster", deps: ["c1"] }
        ]
      },
      searches: [{ slot: "c1", query: "team by name" }, { slot: "s1", query: "roster of a team" }],
      calls: []
    })
  })

  it("reads calls with $refs, generates missing ids, defaults arguments and deps", () => {
    const text = `<plan>[{"id":"c1"}]</plan><call>[{"id":"c7","name":"a","arguments":{"x":{"$ref":"c1.items[0].id"}}},{"name":"b"}]</call>`
    expect(ok(text)).toEqual({
      plan: { nodes: [{ id: "c1", deps: [] }] },
      searches: [],
      calls: [
        { id: "c7", tool: "a", arguments: { x: { $ref: "c1.items[0].id" } } },
        // c1 is a plan node of this turn, so the generated id skips it
        { id: "c2", tool: "b", arguments: {} }
      ]
    })
  })

  it("generated ids skip earlier ids and start at nextCallIndex", () => {
    const text = `<call>[{"name":"a"},{"name":"b"},{"name":"c"}]</call>`
    expect(ok(text, { usedCallIds: ["c1", "c3"] }).calls.map((c) => c.id)).toEqual(["c2", "c4", "c5"])
    expect(ok(text, { nextCallIndex: 10 }).calls.map((c) => c.id)).toEqual(["c10", "c11", "c12"])
    expect(ok(text, { nextCallIndex: Number.NaN }).calls.map((c) => c.id)).toEqual(["c1", "c2", "c3"])
  })

  it("generated slots skip every slot a query names, wherever it stands", () => {
    const slots = assignSlots([{ query: "a" }, { slot: "s1", query: "b" }, { query: "c" }, { slot: "s3", query: "d" }])
    expect(slots).toEqual([{ slot: "s2", query: "a" }, { slot: "s1", query: "b" }, { slot: "s4", query: "c" }, { slot: "s3", query: "d" }])
  })

  it("reads an answer, trimming free text and keeping tag-like text inside it", () => {
    expect(ok("  <think>\n  done <answer>not this</answer> \n</think>\n<answer>\n  The <b>answer</b> is 42.\n</answer>\n")).toEqual({
      think: "done <answer>not this</answer>",
      searches: [],
      calls: [],
      answer: "The <b>answer</b> is 42."
    })
  })

  it("accepts an answer with a plan (the controller, not the parser, scores it)", () => {
    expect(ok(`<plan>[{"id":"c1"}]</plan><answer>x</answer>`).answer).toBe("x")
  })

  it("keeps `<` and closing tags of other tags inside JSON strings", () => {
    const turn = ok(`<call>[{"id":"c1","name":"t","arguments":{"q":"</call><answer>x</answer>"}}]</call>`)
    expect(turn.calls[0]?.arguments).toEqual({ q: "</call><answer>x</answer>" })
  })

  it("keeps a __proto__ argument as data", () => {
    const turn = ok(`<call>[{"id":"c1","name":"t","arguments":{"__proto__":{"polluted":1}}}]</call>`)
    const args = turn.calls[0]?.arguments ?? {}
    expect(Object.keys(args)).toEqual(["__proto__"])
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined()
  })
})

describe("parseTurn: errors name the tag and the exact offset", () => {
  const cases: ReadonlyArray<{ readonly name: string; readonly text: string; readonly tag: string; readonly offset: number; readonly at: string; readonly says: string; readonly options?: ParseOptions }> = [
    { name: "empty text", text: "", tag: "think", offset: 0, at: "", says: "no action" },
    { name: "prose before the tags", text: "Sure! <call>[]</call>", tag: "think", offset: 0, at: "Sure", says: "text outside tags" },
    { name: "prose between tags", text: "<think>a</think> ok <answer>b</answer>", tag: "think", offset: 17, at: "ok", says: "text outside tags" },
    { name: "unknown tag", text: "<tool_call>{}</tool_call>", tag: "think", offset: 0, at: "<tool_call>", says: "unknown tag <tool_call>" },
    { name: "uppercase tag", text: "<Answer>x</Answer>", tag: "think", offset: 0, at: "<Answer>", says: "lowercase" },
    { name: "stray closing tag", text: "<think>a</think></plan>", tag: "think", offset: 16, at: "</plan>", says: "without a matching <plan>" },
    { name: "unclosed think", text: "<think>abc <answer>x</answer>", tag: "think", offset: 0, at: "<think>", says: "never closed" },
    { name: "duplicated tag", text: "<think>a</think><think>b</think>", tag: "think", offset: 16, at: "<think>b", says: "appears twice" },
    { name: "tags out of order", text: "<call>[{\"name\":\"t\"}]</call><plan>[]</plan>", tag: "plan", offset: 27, at: "<plan>", says: "must come before <call>" },
    { name: "empty call tag", text: "<call></call>", tag: "call", offset: 6, at: "</call>", says: "expected a JSON value" },
    { name: "trailing comma", text: "<call>[{\"name\":\"t\",}]</call>", tag: "call", offset: 19, at: "}]", says: "expected a quoted object key" },
    { name: "unterminated string", text: "<search>[\"abc]</search>", tag: "search", offset: 9, at: "\"abc", says: "unterminated string" },
    { name: "JSON not closed by the tag", text: "<call>[{\"name\":\"t\"}] x</call>", tag: "call", offset: 21, at: "x</call>", says: "expected </call>" },
    { name: "missing closing tag after JSON", text: "<call>[{\"name\":\"t\"}]", tag: "call", offset: 20, at: "", says: "expected </call>" },
    { name: "wrong type of a field", text: "<call>[{\"id\":\"c1\",\"name\":42}]</call>", tag: "call", offset: 25, at: "42", says: "[0].name: Expected string, got 42" },
    { name: "missing field", text: "<call>[{\"id\":\"c1\",\"name\":\"a\"},{\"arguments\":{}}]</call>", tag: "call", offset: 30, at: "{\"arguments\"", says: "[1]: missing required field \"name\"" },
    { name: "unknown field", text: "<call>[{\"tool\":\"t\",\"name\":\"t\"}]</call>", tag: "call", offset: 8, at: "\"tool\"", says: "[0].tool: unknown field (allowed: id, name, arguments)" },
    { name: "bad id", text: "<call>[{\"id\":\"c-1\",\"name\":\"t\"}]</call>", tag: "call", offset: 13, at: "\"c-1\"", says: "[0].id: an id is" },
    { name: "duplicate id in a turn", text: "<call>[{\"id\":\"c1\",\"name\":\"a\"},{\"id\":\"c1\",\"name\":\"b\"}]</call>", tag: "call", offset: 36, at: "\"c1\",\"name\":\"b\"", says: "appears twice in this turn" },
    { name: "id used earlier", text: "<call>[{\"id\":\"c2\",\"name\":\"a\"}]</call>", tag: "call", offset: 13, at: "\"c2\"", says: "used by an earlier call", options: { usedCallIds: ["c2"] } },
    { name: "arguments not an object", text: "<call>[{\"name\":\"a\",\"arguments\":[1]}]</call>", tag: "call", offset: 31, at: "[1]", says: "[0].arguments" },
    { name: "malformed $ref", text: "<call>[{\"name\":\"a\",\"arguments\":{\"x\":[{\"$ref\":\"c1.\"}]}}]</call>", tag: "call", offset: 37, at: "{\"$ref\"", says: "[0].arguments.x[0]: malformed $ref \"c1.\"" },
    { name: "non-string $ref", text: "<call>[{\"name\":\"a\",\"arguments\":{\"x\":{\"$ref\":1}}}]</call>", tag: "call", offset: 36, at: "{\"$ref\":1}", says: "must be a string" },
    { name: "number out of range", text: "<call>[{\"name\":\"a\",\"arguments\":{\"x\":1e400}}]</call>", tag: "call", offset: 36, at: "1e400", says: "got Infinity" },
    { name: "call list is an object", text: "<call>{\"name\":\"a\"}</call>", tag: "call", offset: 6, at: "{", says: "JSON list of calls" },
    { name: "empty call list", text: "<call> [ ] </call>", tag: "call", offset: 7, at: "[ ]", says: "empty list" },
    { name: "empty plan", text: "<plan>{\"nodes\":[]}</plan><search>[\"q\"]</search>", tag: "plan", offset: 6, at: "{\"nodes\"", says: "no nodes" },
    { name: "plan dep not a string", text: "<plan>{\"nodes\":[{\"id\":\"c1\",\"deps\":[3]}]}</plan>", tag: "plan", offset: 35, at: "3]", says: "nodes[0].deps[0]" },
    { name: "blank query", text: "<search>[\"q\",\"  \"]</search>", tag: "search", offset: 13, at: "\"  \"", says: "[1]: a query has at least one non-space character" },
    { name: "duplicate slot", text: "<search>[{\"slot\":\"a\",\"query\":\"x\"},{\"slot\":\"a\",\"query\":\"y\"}]</search>", tag: "search", offset: 42, at: "\"a\",\"query\":\"y\"", says: "appears twice" },
    { name: "empty answer", text: "<answer> \n </answer>", tag: "answer", offset: 0, at: "<answer>", says: "empty" },
    { name: "answer with calls", text: "<call>[{\"name\":\"a\"}]</call><answer>x</answer>", tag: "answer", offset: 27, at: "<answer>", says: "cannot come with <call>" },
    { name: "search and call together", text: "<search>[\"q\"]</search>\n<call>[{\"name\":\"a\"}]</call>", tag: "call", offset: 23, at: "<call>", says: "either searches or calls" },
    { name: "think only", text: "<think>hmm</think>\n", tag: "think", offset: 19, at: "", says: "no action" },
    { name: "plan only", text: "<plan>[{\"id\":\"c1\"}]</plan>", tag: "plan", offset: 26, at: "", says: "no action" },
    { name: "deep nesting", text: `<call>${"[".repeat(200)}</call>`, tag: "call", offset: 134, at: "[", says: "nested deeper than 128" }
  ]
  for (const c of cases) {
    it(c.name, () => {
      const e = err(c.text, c.options)
      expect({ tag: e.tag, offset: e.offset }).toEqual({ tag: c.tag, offset: c.offset })
      expect(c.text.slice(e.offset).startsWith(c.at)).toBe(true)
      expect(e.message).toContain(c.says)
    })
  }
})

describe("parseTurn: lenient mode", () => {
  it("ignores prose, reads fenced JSON, a single call object and string arguments", () => {
    const text = "Sure, here is my plan.\n<think>ok</think>\nNow I call:\n<call>\n```json\n" +
      `{"name":"forecast","arguments":"{\\"city\\":\\"Paris\\"}","note":"ignored"}` + "\n```\n</call>\nHope this helps!"
    expect(ok(text, { lenient: true })).toEqual({
      think: "ok",
      searches: [],
      calls: [{ id: "c1", tool: "forecast", arguments: { city: "Paris" } }]
    })
    expect(err(text).offset).toBe(0)
  })

  it("accepts a missing closing tag at the end of the text and a single search string", () => {
    expect(ok("<search>\"weather api\"", { lenient: true }).searches).toEqual([{ slot: "s1", query: "weather api" }])
    expect(ok("<think>a</think><answer>forty-two", { lenient: true }).answer).toBe("forty-two")
  })

  it("still rejects broken JSON, naming the offset", () => {
    const e = err("blah <call>[{\"name\":\"a\"</call>", { lenient: true })
    expect({ tag: e.tag, offset: e.offset }).toEqual({ tag: "call", offset: 23 })
  })

  it("reports string arguments that are not JSON at the arguments value", () => {
    const text = `<call>[{"name":"a","arguments":"{oops"}]</call>`
    const e = err(text, { lenient: true })
    expect(e.offset).toBe(text.indexOf(`"{oops"`))
    expect(e.message).toContain("not JSON")
  })
})

describe("printTurn", () => {
  it("prints the canonical form", () => {
    const turn: Turn = {
      think: "t",
      searches: [],
      calls: [
        { id: "c1" as never, tool: "a" as never, arguments: { z: 1, a: { y: [1, { $ref: "c0.k" }], b: null } } },
        { id: "c2" as never, tool: "b" as never, arguments: {} }
      ]
    }
    expect(printTurn(turn)).toBe([
      "<think>",
      "t",
      "</think>",
      "<call>",
      "[",
      `  {"id":"c1","name":"a","arguments":{"a":{"b":null,"y":[1,{"$ref":"c0.k"}]},"z":1}},`,
      `  {"id":"c2","name":"b","arguments":{}}`,
      "]",
      "</call>"
    ].join("\n"))
  })

  it("the instructions show every example exactly as printed, and each example parses back", () => {
    for (const example of examples) {
      expect(instructions).toContain(printTurn(example))
      const back = parseTurn(printTurn(example))
      expect(Result.isSuccess(back) && sameTurn(back.success, example)).toBe(true)
    }
  })
})

describe("properties", () => {
  it("print then parse is the identity on valid turns (2,000 turns)", () => {
    fc.assert(
      fc.property(validTurnArb, (turn) => {
        expect(Result.isSuccess(validateTurn(turn))).toBe(true)
        const text = printTurn(turn)
        const back = parseTurn(text)
        if (Result.isFailure(back)) throw new Error(`${back.failure.message} in\n${text}`)
        expect(back.success).toEqual(turn)
        expect(printTurn(back.success)).toBe(text)
      }),
      { numRuns: 2000 }
    )
  })

  it("parseTurn is total on arbitrary unicode strings (10,000 runs, strict and lenient)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 200 }), fc.boolean(), (text, lenient) => {
        checkContract(text, { lenient })
      }),
      { numRuns: 10_000 }
    )
  })

  it("parseTurn is total on strings built from protocol fragments (10,000 runs, strict and lenient)", () => {
    let parsed = 0
    fc.assert(
      fc.property(soupArb, fc.boolean(), (text, lenient) => {
        checkContract(text, { lenient })
        if (Result.isSuccess(parseTurn(text, { lenient }))) parsed++
      }),
      { numRuns: 10_000 }
    )
    // the soup reaches the success path too, not only errors
    expect(parsed).toBeGreaterThan(0)
  })

  it("every mutation of a printed valid turn parses canonically or fails inside the text (5,000 runs)", () => {
    fc.assert(
      fc.property(validTurnArb, mutationArb, fc.boolean(), (turn, mutation, lenient) => {
        checkContract(mutate(printTurn(turn), mutation), { lenient })
      }),
      { numRuns: 5000 }
    )
  })

  it("truncating a printed turn inside its last tag is an error at or before the cut (strict)", () => {
    fc.assert(
      fc.property(validTurnArb, fc.nat(), (turn, k) => {
        const text = printTurn(turn)
        const lastOpen = text.lastIndexOf("\n<") + 1
        const cut = lastOpen + 1 + (k % (text.length - lastOpen - 1))
        const r = parseTurn(text.slice(0, cut))
        expect(Result.isFailure(r)).toBe(true)
        if (Result.isFailure(r)) expect(r.failure.offset).toBeLessThanOrEqual(cut)
      }),
      { numRuns: 1000 }
    )
  })

  it("validateTurn accepts a turn exactly when printing and parsing it gives it back", () => {
    const loose = fc.record({
      think: fc.option(fc.constantFrom("ok", " padded ", "has </think> inside", ""), { nil: undefined }),
      answer: fc.option(fc.constantFrom("yes", "", " x", "a </answer> b"), { nil: undefined }),
      searches: fc.constantFrom([], [{ slot: "s1", query: "q" }], [{ slot: "s1", query: "q" }, { slot: "s1", query: "r" }], [{ slot: "s1", query: " " }]),
      calls: fc.constantFrom(
        [],
        [{ id: "c1", tool: "t", arguments: {} }],
        [{ id: "c1", tool: "t", arguments: {} }, { id: "c1", tool: "u", arguments: {} }],
        [{ id: "bad.id", tool: "t", arguments: {} }],
        [{ id: "c1", tool: "t", arguments: { a: { $ref: "c0..x" } } }],
        [{ id: "c1", tool: "t", arguments: { a: Number.POSITIVE_INFINITY } }]
      ),
      plan: fc.option(fc.constantFrom({ nodes: [] }, { nodes: [{ id: "c1", deps: ["c0"] }] }, { nodes: [{ id: "c1", deps: ["0x"] }] }), { nil: undefined })
    }).map((t) => {
      const { think, answer, plan, ...rest } = t
      return {
        ...rest,
        ...(think !== undefined ? { think } : {}),
        ...(answer !== undefined ? { answer } : {}),
        ...(plan !== undefined ? { plan } : {})
      } as unknown as Turn
    })
    fc.assert(
      fc.property(loose, (turn) => {
        const valid = Result.isSuccess(validateTurn(turn))
        const back = parseTurn(printTurn(turn))
        expect(valid).toBe(Result.isSuccess(back) && sameTurn(back.success, turn))
      }),
      { numRuns: 1000 }
    )
  })
})

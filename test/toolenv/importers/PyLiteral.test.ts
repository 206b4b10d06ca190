import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { assignments, parse } from "../../../src/toolenv/importers/PyLiteral.ts"

describe("PyLiteral", () => {
  it("reads dicts, lists, tuples, sets, strings, numbers and constants", () => {
    const r = parse(`{'a': 'it\\'s', "b": [1, 2.5, -3e2, True, None, False], 'c': ('x', 'y'), 'd': {1, 2}, 'f': 'x' "y", 'g': """two
lines""", 'h': '\\n\\x41'}`)
    expect(r.ok && r.value).toEqual({ a: "it's", b: [1, 2.5, -300, true, null, false], c: ["x", "y"], d: [1, 2], f: "xy", g: "two\nlines", h: "\nA" })
  })

  it("repairs bare type names and forgotten apostrophe escapes, and says so", () => {
    const r = parse(`{'type': str, 'description': 'The user's budget.'}`)
    expect(r.ok && r.value).toEqual({ type: "str", description: "The user's budget." })
    expect(r.ok && r.notes).toEqual(["bare name str read as a string", "unescaped ' inside a string kept as text"])
  })

  it("keeps a `__proto__` key as data, not as the object's prototype", () => {
    const r = parse(`{'__proto__': {'polluted': True}, 'constructor': 1}`)
    expect(r.ok && Object.keys(r.value as object)).toEqual(["__proto__", "constructor"])
    expect(r.ok && Object.getPrototypeOf(r.value)).toBe(Object.prototype)
  })

  it("fails with a position on a truncated literal", () => {
    expect(parse("{'a': [1, 2")).toEqual({ ok: false, at: 11, message: "expected \",\" or \"]\"" })
    expect(parse("'open")).toEqual({ ok: false, at: 5, message: "unterminated string" })
  })

  it("reads top-level assignments and reports the ones that are not literals", () => {
    const { values, problems } = assignments(`description = "Get a token"
input_parameters = {
    'username': {'type': 'str', 'description': 'The username.'},  # trailing comment
}
output_parameters = {'token': {'type': 'str'}}`)
    expect(Object.fromEntries(values)).toEqual({
      description: "Get a token",
      input_parameters: { username: { type: "str", description: "The username." } },
      output_parameters: { token: { type: "str" } }
    })
    expect(problems).toEqual([])
  })

  it("reads back what a Python printer writes", () => {
    // Python's repr of JSON-like data: True/False/None, strings quoted like JSON (no \\u escapes: Python has them too, but not for all code points)
    const toPython = (v: unknown): string =>
      v === null ? "None" : v === true ? "True" : v === false ? "False" : typeof v === "number" || typeof v === "string" ? JSON.stringify(v)
      : Array.isArray(v) ? `[${v.map(toPython).join(", ")}]`
      : `{${Object.entries(v as Record<string, unknown>).map(([k, x]) => `${JSON.stringify(k)}: ${toPython(x)}`).join(", ")}}`
    const json = fc.jsonValue({ maxDepth: 3 }).filter((v) => !JSON.stringify(v).includes("\\u"))
    fc.assert(
      fc.property(json, (v) => {
        const text = toPython(v)
        const r = parse(text)
        // JSON's -0 reads back as 0 (Python and JSON agree); compare through JSON
        expect(r.ok && JSON.stringify(r.value)).toBe(JSON.stringify(v))
      }),
      { numRuns: 300 }
    )
  })
})

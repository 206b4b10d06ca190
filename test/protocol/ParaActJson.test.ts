import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { locate, maxDepth, readJson, readJsonAt } from "../../src/protocol/ParaActJson.ts"

/** JSON.parse, or undefined when it rejects the text. */
const native = (text: string): { readonly value: unknown } | undefined => {
  try {
    return { value: JSON.parse(text) }
  } catch {
    return undefined
  }
}

/** Structural equality that treats -0 as 0 (the reader normalises it) and keeps `__proto__` keys. */
const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b)

const jsonish = fc.array(
  fc.oneof(
    fc.constantFrom("{", "}", "[", "]", ",", ":", "\"", "\\", "\\u00e9", "\\x", "\\u12", "null", "nul", "true", "false",
      "-", "0", "01", "1.", ".5", "1e", "1e+5", "-0", "2.5E-3", " ", "\n", "\t", "\r", "\u00a0", "\u0001", "\"a\"", "\"__proto__\""),
    fc.string({ unit: "binary", maxLength: 3 })
  ),
  { maxLength: 25 }
).map((parts) => parts.join(""))

describe("readJson agrees with JSON.parse", () => {
  it("on valid JSON texts (3,000 runs): same value", () => {
    fc.assert(
      fc.property(fc.json({ maxDepth: 6 }), (text) => {
        const r = readJson(text)
        expect(r.ok).toBe(true)
        if (r.ok) expect(same(r.read.value, JSON.parse(text))).toBe(true)
      }),
      { numRuns: 3000 }
    )
  })

  it("on JSON-like soup (10,000 runs): accepts exactly what JSON.parse accepts", () => {
    fc.assert(
      fc.property(jsonish, (text) => {
        const r = readJson(text)
        const n = native(text)
        expect(r.ok).toBe(n !== undefined)
        if (r.ok && n !== undefined) expect(same(r.read.value, n.value)).toBe(true)
        if (!r.ok) {
          expect(r.error.offset).toBeGreaterThanOrEqual(0)
          expect(r.error.offset).toBeLessThanOrEqual(text.length)
        }
      }),
      { numRuns: 10_000 }
    )
  })

  it("every span slices back to its own value", () => {
    fc.assert(
      fc.property(fc.json({ maxDepth: 4 }), (text) => {
        const r = readJson(text)
        if (!r.ok) throw new Error("valid JSON rejected")
        const check = (span: typeof r.read.span): void => {
          const slice = text.slice(span.start, span.end)
          expect(native(slice)).toBeDefined()
          for (const item of span.items ?? []) check(item)
          for (const [key, member] of span.keys ?? []) {
            const keyRead = readJsonAt(text, member.keyStart)
            expect(keyRead.ok && keyRead.read.span.start === member.keyStart && keyRead.read.value).toBe(key)
            check(member.value)
          }
        }
        check(r.read.span)
      }),
      { numRuns: 1000 }
    )
  })
})

describe("readJsonAt", () => {
  it("reads one value inside a larger text and stops right after it", () => {
    const text = `<call> [1, {"a": "x"}] </call>`
    const r = readJsonAt(text, 6)
    expect(r.ok && { value: r.read.value, end: r.read.end, start: r.read.span.start }).toEqual({ value: [1, { a: "x" }], end: 22, start: 7 })
  })

  it("keeps __proto__ as an own data key, the last duplicate key wins", () => {
    const r = readJson(`{"__proto__": {"x": 1}, "a": 1, "a": 2}`)
    expect(r.ok).toBe(true)
    if (r.ok) {
      const value = r.read.value as Record<string, unknown>
      expect(Object.keys(value)).toEqual(["__proto__", "a"])
      expect(value["a"]).toBe(2)
      expect(Object.getPrototypeOf(value)).toBe(Object.prototype)
    }
  })

  it("reports errors at the offending character", () => {
    const cases: ReadonlyArray<readonly [string, number, string]> = [
      ["", 0, "found end of text"],
      ["[1,]", 3, "expected a JSON value"],
      ["{\"a\" 1}", 5, "expected ':'"],
      ["{a:1}", 1, "quoted object key"],
      ["[1 2]", 3, "expected ',' or ']'"],
      ["\"ab\ncd\"", 3, "unescaped character U+000A"],
      ["\"\\q\"", 1, "invalid escape \"q\""],
      ["\"\\u12g4\"", 1, "four hex digits"],
      ["-x", 1, "expected a digit"],
      ["1.e5", 2, "after '.'"],
      ["1e+", 3, "exponent"],
      ["tru", 0, "expected a JSON value"],
      ["[1] x", 4, "after the JSON value"],
      [`${"[".repeat(maxDepth + 1)}`, maxDepth, "nested deeper"]
    ]
    for (const [text, offset, says] of cases) {
      const r = readJson(text)
      expect(r.ok, text).toBe(false)
      if (!r.ok) {
        expect(r.error.offset, text).toBe(offset)
        expect(r.error.message, text).toContain(says)
      }
    }
  })

  it("nesting up to the bound is fine, deeper is an error, never a stack overflow", () => {
    const ok = readJson(`${"[".repeat(maxDepth)}${"]".repeat(maxDepth)}`)
    expect(ok.ok).toBe(true)
    const deep = readJson("[".repeat(100_000))
    expect(deep.ok).toBe(false)
  })
})

describe("locate", () => {
  it("follows keys and indexes to the offset of a value, or as far as the path exists", () => {
    const text = `{"a": [10, {"b": true}], "c": null}`
    const r = readJson(text)
    if (!r.ok) throw new Error("unexpected")
    expect(locate(r.read.span, ["a", 1, "b"])).toEqual({ offset: text.indexOf("true"), keyOffset: text.indexOf("\"b\""), depth: 3, complete: true })
    expect(locate(r.read.span, ["a", 5])).toEqual({ offset: text.indexOf("["), keyOffset: text.indexOf("\"a\""), depth: 1, complete: false })
    expect(locate(r.read.span, ["zz"]).offset).toBe(0)
  })
})

import { assert, describe, it } from "@effect/vitest"
import * as Decode from "../../../src/benchmarks/bfcl/BfclDecode.ts"
import * as Py from "../../../src/benchmarks/bfcl/BfclValue.ts"

/** The decoded calls as `repr` shows them in Python, or the failure. */
const decoded = (text: string): string => {
  const d = Decode.decodePrompting(text)
  return d.ok ? Py.repr(d.value) : `error: ${d.message}`
}

describe("the prompting-style decoder (as BFCL's default_decode_ast_prompting + ast_parse)", () => {
  it("reads a Python list of calls with keyword arguments, keeping Python's types", () => {
    assert.strictEqual(decoded("[spotify.play(artist='Taylor Swift', duration=20), spotify.play(artist=\"Maroon 5\", duration=15.0)]"),
      "[{'spotify.play': {'artist': 'Taylor Swift', 'duration': 20}}, {'spotify.play': {'artist': 'Maroon 5', 'duration': 15.0}}]")
    assert.strictEqual(decoded("[f(a=True, b=None, c=[1, -2, 3.5], d={'k': (1, 2)}, e=1_000, g=0x10)]"),
      "[{'f': {'a': True, 'b': None, 'c': [1, -2, 3.5], 'd': {'k': (1, 2)}, 'e': 1000, 'g': 16}}]")
  })

  it("adds the brackets, strips backticks and newlines, and reads one bare call", () => {
    assert.strictEqual(decoded("```\nget_weather(city='Paris')\n```"), "[{'get_weather': {'city': 'Paris'}}]")
    assert.strictEqual(decoded("a(x=1), b(y=2)"), "[{'a': {'x': 1}}, {'b': {'y': 2}}]")
    assert.strictEqual(decoded("[]"), "[]")
  })

  it("drops positional arguments, names a variable as a string, evaluates arithmetic, stringifies calls and subscripts", () => {
    assert.strictEqual(decoded("[f(5, x=y)]"), "[{'f': {'x': 'y'}}]")
    assert.strictEqual(decoded("[f(x=2**10, y=10/4, z=7//2, w='ab'*2)]"), "[{'f': {'x': 1024, 'y': 2.5, 'z': 3, 'w': 'abab'}}]")
    assert.strictEqual(decoded("[f(x=math.sqrt(16), y=data[0])]"), "[{'f': {'x': 'math.sqrt(16)', 'y': 'data[0]'}}]")
    assert.strictEqual(decoded("[f(x=g(a=1))]"), "[{'f': {'x': {'g': {'a': 1}}}}]")
  })

  it("keeps BFCL's unary quirk: every unary operator on a constant negates it", () => {
    assert.strictEqual(decoded("[f(x=-5, y=+5, z=not True)]"), "[{'f': {'x': -5, 'y': -5, 'z': -1}}]")
  })

  it("fails where BFCL's decoder fails: prose, unbalanced text, a non-call item, unsupported values", () => {
    for (const text of [
      "I cannot help with that.",
      "[f(x=1]",
      "[f(x=1), 5]",
      "[f(x={1, 2})]",
      "[f(x=lambda y: y)]",
      "[f(x=a == b)]",
      "[f(x=1, x=2)]",
      "[f(x=1, 2)]",
      "[f(x=f'{y}')]",
      "[f(x=-y)]"
    ]) assert.match(decoded(text), /^error: /, text)
  })

  it("FC style: JSON-string arguments keep ints and floats apart; text is no call only when empty", () => {
    const fc = Decode.decodeFc(Py.fromJson([{ "math.add": "{\"a\": 1, \"b\": 2.0}" }]))
    assert.isTrue(fc.ok)
    assert.strictEqual(fc.ok ? Py.repr(fc.value) : "", "[{'math.add': {'a': 1, 'b': 2.0}}]")
    assert.isFalse(Decode.decodeFc(Py.str("Sure, here you go")).ok)
    assert.deepStrictEqual(Decode.decodeFc(Py.str("")), { ok: true, value: Py.list([]) })
    assert.isFalse(Decode.decodeFc(Py.fromJson([{ f: "{broken" }])).ok)
    assert.isTrue(Decode.isEmptyOutput(Py.list([Py.dict([])])))
    assert.isFalse(Decode.isCallFormat(Py.fromJson([{ f: 1 }])))
  })

  it("Python values: == across bool/int/float, lists never equal tuples, repr as Python prints it", () => {
    assert.isTrue(Py.eq(Py.bool(true), Py.int(1)))
    assert.isTrue(Py.eq(Py.int(2), Py.float(2)))
    assert.isFalse(Py.eq(Py.list([Py.int(1)]), Py.tuple([Py.int(1)])))
    assert.isTrue(Py.eq(Py.int(9007199254740993n), Py.int(9007199254740993n)))
    assert.isFalse(Py.eq(Py.int(9007199254740993n), Py.float(9007199254740992)))
    const floats = Py.parseJson("{\"a\": \"it's\", \"b\": [1.5, 1e20, 0.0001, 1e-05]}")
    assert.strictEqual(floats.ok ? Py.repr(floats.value) : "", "{'a': \"it's\", 'b': [1.5, 1e+20, 0.0001, 1e-05]}")
    const parsed = Py.parseJson("{\"x\": 5.0, \"y\": 5, \"x\": 6.0}")
    assert.strictEqual(parsed.ok ? Py.repr(parsed.value) : "", "{'x': 6.0, 'y': 5}")
    assert.isFalse(Py.parseJson("{\"x\": }").ok)
  })
})

import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import type { CallId } from "../../src/domain/Ids.ts"
import type { Json, JsonObject } from "../../src/domain/Json.ts"
import { collectRefs, formatRef, isRef, parseRef, resolveRefs, select } from "../../src/protocol/Refs.ts"
import { argumentsArb } from "../support/Turns.ts"

const outputs: Record<string, Json> = {
  c1: { results: [{ id: "t_17", name: "Lakers", tags: ["nba", "west"] }, { id: "t_3", name: "Celtics" }], "0": "key zero", total: 2 },
  c2: [10, 20, [30, 40]],
  c3: null,
  c4: "plain"
}
const lookup = (id: CallId): Json | undefined => outputs[id]

describe("parseRef", () => {
  it("reads dotted paths, bracket indexes and a bare id", () => {
    expect(parseRef("c1")).toEqual({ ok: true, target: { call: "c1", path: [] } })
    expect(parseRef("c1.results.0.id")).toEqual({ ok: true, target: { call: "c1", path: ["results", "0", "id"] } })
    expect(parseRef("c1.results[0].tags[1]")).toEqual({ ok: true, target: { call: "c1", path: ["results", "0", "tags", "1"] } })
    expect(parseRef("step_2.a b.-x")).toEqual({ ok: true, target: { call: "step_2", path: ["a b", "-x"] } })
  })

  it("rejects malformed references with the offset of the problem", () => {
    expect(parseRef("")).toMatchObject({ ok: false, error: { offset: 0 } })
    expect(parseRef("1c.a")).toMatchObject({ ok: false, error: { offset: 0 } })
    expect(parseRef("c1..a")).toMatchObject({ ok: false, error: { offset: 3, message: "empty path segment" } })
    expect(parseRef("c1.")).toMatchObject({ ok: false, error: { offset: 3 } })
    expect(parseRef("c1[x]")).toMatchObject({ ok: false, error: { offset: 2, message: "expected an array index like [0]" } })
    expect(parseRef("c1[01]")).toMatchObject({ ok: false, error: { offset: 2 } })
    expect(parseRef("c1[0")).toMatchObject({ ok: false, error: { offset: 2 } })
    expect(parseRef("c-1.a")).toMatchObject({ ok: false, error: { offset: 1 } })
  })

  it("formatRef prints the dotted form that parseRef reads back", () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,8}$/),
        fc.array(fc.stringMatching(/^[^.[]{1,6}$/), { maxLength: 4 }),
        (call, path) => {
          const target = { call: call as CallId, path }
          expect(parseRef(formatRef(target))).toEqual({ ok: true, target })
        }
      ),
      { numRuns: 500 }
    )
  })
})

describe("collectRefs", () => {
  it("finds placeholders at any depth with their paths, in document order", () => {
    const args: JsonObject = {
      team: { $ref: "c1.results.0.id" },
      list: [1, { deep: { $ref: "c2.2.1" } }, { $ref: 5 }],
      bad: { $ref: "c1", extra: true },
      plain: { ref: "c1" }
    }
    expect(collectRefs(args)).toEqual([
      { _tag: "Ref", path: ["team"], ref: "c1.results.0.id", target: { call: "c1", path: ["results", "0", "id"] } },
      { _tag: "Ref", path: ["list", 1, "deep"], ref: "c2.2.1", target: { call: "c2", path: ["2", "1"] } },
      { _tag: "Malformed", path: ["list", 2], ref: "5", message: "the value of $ref must be a string" },
      { _tag: "Malformed", path: ["bad"], ref: "c1", message: "a $ref object has no other keys, found \"extra\"" }
    ])
  })

  it("a $ref key at the top of the arguments is malformed: arguments are never a placeholder", () => {
    expect(collectRefs({ $ref: "c1" })).toEqual([
      { _tag: "Malformed", path: [], ref: "c1", message: "a $ref stands for an argument value, not for the whole arguments object" }
    ])
  })

  it("isRef recognises exactly the one-key string placeholders", () => {
    expect(isRef({ $ref: "c1" })).toBe(true)
    expect(isRef({ $ref: "c1", a: 1 })).toBe(false)
    expect(isRef({ $ref: 1 })).toBe(false)
    expect(isRef([{ $ref: "c1" }])).toBe(false)
    expect(isRef("c1")).toBe(false)
  })
})

describe("resolveRefs", () => {
  it("replaces references by the values they point at, nested in objects and arrays", () => {
    const r = resolveRefs(
      {
        team_id: { $ref: "c1.results.0.id" },
        names: [{ $ref: "c1.results[1].name" }, "fixed"],
        nested: { pair: { $ref: "c2.2" }, zero: { $ref: "c1.0" }, whole: { $ref: "c4" } },
        count: { $ref: "c1.total" }
      },
      lookup
    )
    expect(r).toEqual({
      arguments: {
        team_id: "t_17",
        names: ["Celtics", "fixed"],
        nested: { pair: [30, 40], zero: "key zero", whole: "plain" },
        count: 2
      },
      unresolved: [],
      consumed: ["c1", "c2", "c4"]
    })
  })

  it("a reference to null output resolves to null", () => {
    expect(resolveRefs({ x: { $ref: "c3" } }, lookup)).toEqual({ arguments: { x: null }, unresolved: [], consumed: ["c3"] })
  })

  it("leaves unresolvable references in place and says why", () => {
    const args: JsonObject = {
      a: { $ref: "c9.x" },
      b: { $ref: "c1.results.5.id" },
      c: { $ref: "c1.missing" },
      d: { $ref: "c2.first" },
      e: { $ref: "c3.x" },
      f: { $ref: "c1..x" },
      g: { $ref: "c1.results.0.id" }
    }
    const r = resolveRefs(args, lookup)
    expect(r.arguments).toEqual({ ...args, g: "t_17" })
    expect(r.consumed).toEqual(["c1"])
    expect(r.unresolved).toEqual([
      { path: ["a"], ref: "c9.x", reason: "missing_call", message: "no output of an earlier call c9" },
      { path: ["b"], ref: "c1.results.5.id", reason: "missing_field", message: "c1.results.5: index 5 is out of range (length 2)" },
      { path: ["c"], ref: "c1.missing", reason: "missing_field", message: "c1.missing: no field \"missing\"" },
      { path: ["d"], ref: "c2.first", reason: "missing_field", message: "c2.first: \"first\" is not an index of an array" },
      { path: ["e"], ref: "c3.x", reason: "missing_field", message: "c3.x: cannot read \"x\" of null" },
      { path: ["f"], ref: "c1..x", reason: "malformed", message: "at character 3: empty path segment" }
    ])
  })

  it("does not read inherited properties and keeps __proto__ keys as data", () => {
    const r = resolveRefs({ a: { $ref: "c1.constructor" }, b: JSON.parse(`{"__proto__": {"x": {"$ref": "c4"}}}`) }, lookup)
    expect(r.unresolved.map((u) => u.reason)).toEqual(["missing_field"])
    const b = r.arguments["b"] as Record<string, unknown>
    expect(Object.keys(b)).toEqual(["__proto__"])
    expect(b["__proto__"]).toEqual({ x: "plain" })
  })

  it("does not change its input", () => {
    const args: JsonObject = { a: { $ref: "c1.total" }, b: [{ $ref: "c2.0" }] }
    const copy = structuredClone(args)
    resolveRefs(args, lookup)
    expect(args).toEqual(copy)
  })

  it("property: with no earlier outputs, arguments come back unchanged and every reference is unresolved", () => {
    fc.assert(
      fc.property(argumentsArb, (args) => {
        const r = resolveRefs(args, () => undefined)
        expect(r.arguments).toEqual(args)
        expect(r.consumed).toEqual([])
        expect(r.unresolved.length).toBe(collectRefs(args).length)
      }),
      { numRuns: 1000 }
    )
  })

  it("property: after resolving against outputs that hold every path, no placeholder is left", () => {
    /** Outputs built so that every well-formed reference among `args` points at something. */
    const outputsFor = (args: JsonObject): Map<string, Record<string, Json>> => {
      const out = new Map<string, Record<string, Json>>()
      const define = (o: Record<string, Json>, key: string, value: Json) =>
        Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true })
      for (const site of collectRefs(args)) {
        if (site._tag !== "Ref") continue
        let node = out.get(site.target.call) ?? {}
        out.set(site.target.call, node)
        for (const segment of site.target.path) {
          const next = Object.hasOwn(node, segment) ? node[segment] : undefined
          if (next !== null && typeof next === "object" && !Array.isArray(next)) node = next as Record<string, Json>
          else {
            const child: Record<string, Json> = {}
            define(node, segment, child)
            node = child
          }
        }
      }
      return out
    }
    fc.assert(
      fc.property(argumentsArb, (args) => {
        const outputs = outputsFor(args)
        const r = resolveRefs(args, (id) => outputs.get(id))
        const sites = collectRefs(args)
        expect(r.unresolved.length).toBe(sites.filter((s) => s._tag === "Malformed").length)
        expect(collectRefs(r.arguments).filter((s) => s._tag === "Ref")).toEqual([])
        expect(new Set(r.consumed)).toEqual(new Set(sites.flatMap((s) => s._tag === "Ref" ? [s.target.call] : [])))
      }),
      { numRuns: 1000 }
    )
  })
})

describe("select", () => {
  it("indexes arrays with digit segments and objects with keys", () => {
    expect(select(outputs["c2"] ?? null, ["2", "0"])).toEqual({ ok: true, value: 30 })
    expect(select(outputs["c1"] ?? null, ["0"])).toEqual({ ok: true, value: "key zero" })
    expect(select(outputs["c2"] ?? null, ["-1"])).toEqual({ ok: false, at: 0, message: "\"-1\" is not an index of an array" })
    expect(select("text", ["length"])).toEqual({ ok: false, at: 0, message: "cannot read \"length\" of string" })
  })
})

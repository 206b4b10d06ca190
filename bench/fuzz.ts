/**
 * Reliability fuzz: seeded model outputs through the turn parser (strict and lenient) and hostile-policy rollouts
 * through the runtime in the four paradigms, counting crashes, hangs, lost and undecodable results (all must be 0).
 * Run: `npx tsx bench/fuzz.ts [--seed 1] [--inputs 100000] [--rollouts 2000] [--json]`; a finding is written to /tmp/fuzz-repro-*.txt.
 */
import { writeFileSync } from "node:fs"
import { isDeepStrictEqual } from "node:util"
import { Cause, Effect, Exit, Layer, Option, Result, Schema } from "effect"
import { Flag } from "effect/cli"
import * as BenchFlags from "./BenchFlags.ts"
import * as RunConfig from "../src/eval/RunConfig.ts"
import { Policy, PolicyError } from "../src/agent/Policy.ts"
import type { PolicyContext, PolicyOutput } from "../src/agent/Policy.ts"
import type { ToolCall } from "../src/domain/Call.ts"
import { taskId, toolId, toolName } from "../src/domain/Ids.ts"
import type { Task } from "../src/domain/Task.ts"
import type { ToolSpec } from "../src/domain/Tool.ts"
import { Trajectory } from "../src/domain/Trajectory.ts"
import type { Paradigm } from "../src/domain/Trajectory.ts"
import { Turn } from "../src/domain/Turn.ts"
import { hashParts, rng } from "../src/math/Random.ts"
import type { Rng } from "../src/math/Random.ts"
import * as ParaAct from "../src/protocol/ParaAct.ts"
import { Retriever } from "../src/retrieval/Retriever.ts"
import { Rollout } from "../src/runtime/Rollout.ts"
import type { RolloutRequest } from "../src/runtime/Rollout.ts"
import * as DepGraph from "../src/toolenv/DepGraph.ts"
import { Simulator } from "../src/toolenv/Simulator.ts"
import { makeLibrary, ToolLibrary } from "../src/toolenv/ToolLibrary.ts"

const flags = await BenchFlags.parse("fuzz", "Fuzz the turn parser and the runtime (hostile policy); exits 1 on any crash, hang or undecodable result", {
  seed: Flag.Int("seed").pipe(Flag.withSchema(RunConfig.IntIn({ minimum: 0, maximum: 4_294_967_295 })), Flag.withDescription("seed of every generator"), Flag.withDefault(1)),
  inputs: Flag.Int("inputs").pipe(Flag.withSchema(RunConfig.IntIn({ minimum: 1, maximum: 10_000_000 })), Flag.withDescription("generated model outputs (each parsed strict and lenient)"), Flag.withDefault(100_000)),
  rollouts: Flag.Int("rollouts").pipe(Flag.withSchema(RunConfig.IntIn({ minimum: 1, maximum: 1_000_000 })), Flag.withDescription("hostile-policy rollouts"), Flag.withDefault(2_000)),
  json: Flag.Boolean("json").pipe(Flag.withDescription("print a last line of JSON with the counts"), Flag.withDefault(false))
})

/** A parse slower than this is a hang (it is synchronous: it cannot be interrupted, only measured). */
const parseHangMs = 1_000
/** A rollout slower than this is a hang (its own time budget, rolloutTimeout below, is 5 s). */
const rolloutHangMs = 10_000
const reproLimit = 3

const quantile = (sorted: Float64Array, q: number): number => (sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0)

const writeRepro = (kind: string, index: number, text: string): string => {
  const file = `/tmp/fuzz-repro-${kind}-${index}.txt`
  writeFileSync(file, text)
  return file
}

// ---------------------------------------------------------------------------------------------------------------
// Model outputs

const fragments: ReadonlyArray<string> = [
  ...ParaAct.tagNames.flatMap((t) => [ParaAct.openTag(t), ParaAct.closeTag(t)]),
  "<", "</", ">", "<THINK>", "< call>", "<call >", "<call/>", "<!--", "-->", "<tool_call>",
  "{", "}", "[", "]", "\"", ":", ",", "\\", "\\u", "\\ud800", "\\\"",
  "\"$ref\"", "{\"$ref\":\"c1.echo\"}", "{\"$ref\":\"c1\"}", "{\"$ref\":\"\"}", "{\"$ref\":\"c1..x\"}", "{\"$ref\":\"c1.a[0].b\"}", "{\"$ref\":1}",
  "\"id\":\"c1\"", "\"id\":\"c2\"", "\"name\":\"alpha\"", "\"name\":\"\"", "\"arguments\":", "\"arguments\":\"{}\"", "\"slot\":\"s1\"", "\"query\":\"alpha\"",
  "\"nodes\":", "\"deps\":[\"c1\"]", "\"deps\":[\"c9\"]", "\"tool\":\"beta\"", "\"__proto__\":", "\"constructor\":",
  "1e999", "-0", "NaN", "Infinity", "-Infinity", "null", "true", "0x10", "1.5e-400", "123456789012345678901234567890",
  "\u0000", "\n", "\r\n", " ", "\t", "```json\n", "```", "\ud800", "\udfff", "😀", "\u202e", "é", "\ufeff", "\u2028", "ｃａｌｌ"
]

const asciiString = (r: Rng, max: number): string => {
  const n = r.int(max + 1)
  let s = ""
  for (let i = 0; i < n; i++) s += String.fromCharCode(32 + r.int(95))
  return s
}

const unicodeString = (r: Rng, max: number): string => {
  const n = r.int(max + 1)
  let s = ""
  for (let i = 0; i < n; i++) s += r.next() < 0.5 ? String.fromCharCode(r.int(0x10000)) : String.fromCodePoint(r.int(0x110000))
  return s
}

const soup = (r: Rng, max: number): string => {
  const n = 1 + r.int(max)
  let s = ""
  for (let i = 0; i < n; i++) s += r.next() < 0.8 ? r.pick(fragments) : asciiString(r, 6)
  return s
}

const toolNames = ["alpha", "beta", "gamma", "slow", "boom", "hang"] as const

const jsonValue = (r: Rng, depth: number, ids: ReadonlyArray<string>): unknown => {
  const k = r.int(depth > 3 ? 5 : 8)
  if (k === 0) return r.int(1000) - 500
  if (k === 1) return asciiString(r, 8)
  if (k === 2) return r.next() < 0.5
  if (k === 3) return null
  if (k === 4) return ids.length > 0 ? { $ref: `${r.pick(ids)}${r.pick(["", ".echo", ".echo.q", ".tool", ".a[0]"])}` } : r.next()
  if (k === 5) return Array.from({ length: r.int(4) }, () => jsonValue(r, depth + 1, ids))
  return Object.fromEntries(Array.from({ length: r.int(4) }, () => [asciiString(r, 5), jsonValue(r, depth + 1, ids)]))
}

/** A turn built to be (mostly) valid: think, plan, searches or calls (with `$ref`s to earlier ids), answer. */
const generatedTurn = (r: Rng): string => {
  const blocks: Array<string> = []
  if (r.next() < 0.5) blocks.push(`<think>${unicodeString(r, 40)}</think>`)
  const mode = r.int(3)
  const ids: Array<string> = []
  if (mode === 0) {
    const slots = Array.from({ length: 1 + r.int(4) }, (_, i) => ({ slot: `s${i + 1}`, query: `${r.pick(toolNames)} ${asciiString(r, 10)}` }))
    if (r.next() < 0.3) blocks.push(`<plan>${JSON.stringify({ nodes: slots.map((s, i) => ({ id: `c${i + 1}`, slot: s.query, deps: i > 0 && r.next() < 0.5 ? [`c${r.int(i) + 1}`] : [] })) })}</plan>`)
    blocks.push(`<search>${JSON.stringify(slots)}</search>`)
  } else if (mode === 1) {
    const calls = Array.from({ length: 1 + r.int(5) }, (_, i) => {
      const id = `c${i + 1 + r.int(3)}`
      const call = { id, name: r.pick(toolNames), arguments: { q: jsonValue(r, 0, ids) } }
      ids.push(id)
      return r.next() < 0.2 ? { name: call.name, arguments: call.arguments } : call
    })
    blocks.push(`<call>${JSON.stringify(calls)}</call>`)
  } else {
    blocks.push(`<answer>${unicodeString(r, 60)}</answer>`)
  }
  return blocks.join(r.pick(["", "\n", " "]))
}

/** Valid printed turns to truncate and mutate: the protocol's own examples and re-printed generated turns. */
const printedTurn = (r: Rng): string => {
  if (r.next() < 0.3) return ParaAct.printTurn(r.pick(ParaAct.examples))
  const text = generatedTurn(r)
  const parsed = ParaAct.parseTurn(text)
  return Result.isSuccess(parsed) ? ParaAct.printTurn(parsed.success) : text
}

const mutate = (r: Rng, text: string): string => {
  let s = text
  const n = 1 + r.int(8)
  for (let i = 0; i < n; i++) {
    const at = r.int(s.length + 1)
    const k = r.int(6)
    if (k === 0) s = s.slice(0, at) + s.slice(at + 1 + r.int(10))
    else if (k === 1) s = s.slice(0, at) + r.pick(fragments) + s.slice(at)
    else if (k === 2) s = s.slice(0, at) + String.fromCharCode(r.int(0x10000)) + s.slice(at + 1)
    else if (k === 3) s = s.slice(0, at) + s.slice(r.int(s.length + 1), r.int(s.length + 1)) + s.slice(at)
    else if (k === 4) s = s + s.slice(0, at)
    else s = s.slice(0, at)
  }
  return s
}

const deepNesting = (r: Rng): string => {
  const d = 1 + r.int(5_000)
  const k = r.int(7)
  if (k === 0) return `<call>[{"id":"c1","name":"alpha","arguments":{"q":${"{\"a\":".repeat(d)}1${"}".repeat(d)}}}]</call>`
  if (k === 1) return `<call>${"[".repeat(d)}${"]".repeat(d)}</call>`
  if (k === 2) return `<call>[{"id":"c1","name":"alpha","arguments":{"q":${"[".repeat(d)}{"$ref":"c0.x"}${"]".repeat(d)}}}]</call>`
  if (k === 3) return `<plan>{"nodes":${"[".repeat(d)}</plan>`
  if (k === 4) return ParaAct.openTag(r.pick(ParaAct.tagNames)).repeat(d)
  if (k === 5) return `<search>${"[".repeat(d)}{"slot":"s1","query":"q"}${"]".repeat(r.int(d + 1))}</search>`
  return `<call>[{"id":"c1","name":"alpha","arguments":{"q":${"{\"$ref\":".repeat(d)}"c1.x"${"}".repeat(d)}}}]</call>`
}

const longRun = (r: Rng): string => {
  // log-uniform length up to 200k: most runs short, some long
  const n = Math.floor(Math.exp(r.next() * Math.log(200_000)))
  const run = r.pick(["A", "a", "<", ">", "[", "{", "\"", "\\", " ", "$", "é", "😀", "<call>", "</", "\n", "Ab1 "]).repeat(n)
  const k = r.int(4)
  if (k === 0) return run
  if (k === 1) return `<answer>${run}</answer>`
  if (k === 2) return `<call>${run}`
  return `<think>${run}</think><call>[{"id":"c1","name":"${run.slice(0, 50_000)}","arguments":{"q":"${run}"}}]</call>`
}

const kinds = ["ascii", "unicode", "soup", "generated", "truncated", "mutated", "nesting", "run"] as const
type Kind = (typeof kinds)[number]

const generate = (r: Rng, kind: Kind): string => {
  switch (kind) {
    case "ascii": return asciiString(r, 200)
    case "unicode": return unicodeString(r, 200)
    case "soup": return soup(r, 60)
    case "generated": return generatedTurn(r)
    case "truncated": {
      const text = printedTurn(r)
      return text.slice(0, r.int(text.length + 1))
    }
    case "mutated": return mutate(r, printedTurn(r))
    case "nesting": return deepNesting(r)
    case "run": return longRun(r)
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Parser fuzz

type ParseFinding = "crash" | "hang" | "undecodable" | "reprint"

const decodeTurnJson = Schema.decodeUnknownSync(Schema.fromJsonString(Turn))

/** The findings of one parse (none for a healthy parse), and its time. */
const checkParse = (text: string, options: ParaAct.ParseOptions): { readonly findings: ReadonlyArray<ParseFinding>; readonly ms: number } => {
  const findings: Array<ParseFinding> = []
  const started = performance.now()
  let result: Result.Result<Turn, unknown> | undefined
  try {
    result = ParaAct.parseTurn(text, options)
  } catch {
    findings.push("crash")
  }
  const ms = performance.now() - started
  if (ms > parseHangMs) findings.push("hang")
  if (result === undefined) return { findings, ms }
  if (!Result.isResult(result)) return { findings: [...findings, "crash"], ms }
  if (Result.isSuccess(result)) {
    const turn = result.success
    try {
      if (!isDeepStrictEqual(decodeTurnJson(JSON.stringify(turn)), turn)) findings.push("undecodable")
    } catch {
      findings.push("undecodable")
    }
    // the printer's contract: a parsed turn prints to text that parses back to it (ids and slots are filled in by now)
    try {
      const again = ParaAct.parseTurn(ParaAct.printTurn(turn), options.usedCallIds === undefined ? {} : { usedCallIds: options.usedCallIds })
      if (!Result.isSuccess(again) || !isDeepStrictEqual(again.success, turn)) findings.push("reprint")
    } catch {
      findings.push("reprint")
    }
  }
  return { findings, ms }
}

/** Removes chunks of `text` while `still` holds (a greedy delta-debugging pass, bounded). */
const shrink = (text: string, still: (s: string) => boolean): string => {
  let best = text
  let budget = 2_000
  for (let size = Math.max(1, Math.floor(best.length / 2)); size >= 1 && budget > 0; size = Math.floor(size / 2)) {
    for (let at = 0; at < best.length && budget > 0; budget--) {
      const candidate = best.slice(0, at) + best.slice(at + size)
      if (still(candidate)) best = candidate
      else at += size
    }
  }
  return best
}

const parserFuzz = () => {
  const root = rng(hashParts(flags.seed, "parser"))
  const times = new Float64Array(flags.inputs * 2)
  const counts: Record<ParseFinding, number> = { crash: 0, hang: 0, undecodable: 0, reprint: 0 }
  const byKind: Record<string, number> = {}
  const repros: Array<string> = []
  let parses = 0
  let slowest = { ms: 0, kind: "ascii" as Kind, chars: 0, lenient: false }
  for (let i = 0; i < flags.inputs; i++) {
    const r = root.fork(String(i))
    const kind = kinds[i % kinds.length] as Kind
    const text = generate(r, kind)
    const usedCallIds = r.next() < 0.3 ? ["c1", "c2", "c3"].slice(0, 1 + r.int(3)) : undefined
    const nextCallIndex = r.next() < 0.2 ? r.pick([0, -1, 1.5, 1e9, Number.NaN, 2]) : undefined
    for (const lenient of [false, true]) {
      const options: ParaAct.ParseOptions = { lenient, ...(usedCallIds === undefined ? {} : { usedCallIds }), ...(nextCallIndex === undefined ? {} : { nextCallIndex }) }
      const { findings, ms } = checkParse(text, options)
      times[parses++] = ms
      if (ms > slowest.ms) slowest = { ms, kind, chars: text.length, lenient }
      for (const f of findings) {
        counts[f]++
        byKind[`${f}:${kind}`] = (byKind[`${f}:${kind}`] ?? 0) + 1
        if (repros.length < reproLimit && !repros.some((p) => p.includes(`parser-${f}-`))) {
          const minimal = f === "hang" ? text : shrink(text, (s) => checkParse(s, options).findings.includes(f))
          repros.push(writeRepro(`parser-${f}`, i, `${JSON.stringify({ finding: f, kind, options: { ...options, nextCallIndex: String(options.nextCallIndex) } })}\n${minimal}`))
        }
      }
    }
  }
  const sorted = times.slice(0, parses).sort()
  return { inputs: flags.inputs, parses, counts, byKind, repros, slowest, p50Ms: quantile(sorted, 0.5), p99Ms: quantile(sorted, 0.99), maxMs: sorted[sorted.length - 1] ?? 0 }
}

// ---------------------------------------------------------------------------------------------------------------
// Runtime fuzz: a hostile policy over a small library whose tools answer, sleep past the call timeout, die or hang

const tool = (name: string): ToolSpec => ({
  id: toolId(`fuzz:${name}`),
  name: toolName(name),
  group: name,
  apiName: name,
  category: "Fuzzing",
  description: `The ${name} tool.`,
  parameters: { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
  source: { kind: "user", ref: "fuzz" }
})

const libraryLayer = Layer.succeed(ToolLibrary, ToolLibrary.of(makeLibrary("fuzz", toolNames.map(tool), DepGraph.empty)))

const retrieverLayer = Layer.succeed(
  Retriever,
  Retriever.of({
    name: "substring",
    search: (queries, k) => Effect.succeed(queries.map((q) => toolNames.filter((n) => q.includes(n)).slice(0, k).map((n) => ({ tool: toolName(n), score: 1 }))))
  })
)

const simulatorLayer = Layer.succeed(
  Simulator,
  Simulator.of({
    open: () =>
      Effect.succeed({
        execute: (call: ToolCall) =>
          Effect.gen(function*() {
            if (call.tool === "boom") return yield* Effect.die(new Error("boom exploded"))
            if (call.tool === "hang") yield* Effect.never
            if (call.tool === "slow") yield* Effect.sleep("1 second")
            return { outcome: { _tag: "ok" as const, payload: { echo: call.arguments, tool: call.tool } }, attempt: 1 }
          })
      })
  })
)

const behaviours = [
  "garbage", "unknownTool", "search", "call", "huge", "nonFinite", "throw", "die", "fail", "think", "answer", "slow", "never"
] as const
type Behaviour = (typeof behaviours)[number]

const usage = (text: string) => ({ promptTokens: 10, completionTokens: text.length })

/** One round of the hostile policy, chosen from the rollout's own mix of behaviours. */
const hostileAct = (context: PolicyContext, log: Map<number, Array<Behaviour>>): Effect.Effect<PolicyOutput, PolicyError> => {
  const mixRng = rng(hashParts(flags.seed, "mix", context.seed))
  // each rollout draws 1–4 behaviours and mixes them
  const mix = Array.from({ length: 1 + mixRng.int(4) }, () => mixRng.pick(behaviours))
  const r = rng(hashParts(flags.seed, "round", context.seed, context.round, context.history.length, context.abandoned?.length ?? 0))
  const behaviour = r.pick(mix)
  const entries = log.get(context.seed) ?? []
  entries.push(behaviour)
  log.set(context.seed, entries)
  const text = (t: string, extra: Partial<PolicyOutput> = {}): Effect.Effect<PolicyOutput> => Effect.succeed({ text: t, usage: usage(t), ...extra })
  switch (behaviour) {
    case "garbage": return text(generate(r, r.pick(kinds)))
    case "unknownTool": return text(`<call>[{"name":"nope_${r.int(100)}","arguments":{"q":"x"}}]</call>`)
    case "search": return text(`<search>[{"slot":"s1","query":"${r.pick(toolNames)} and ${r.pick(toolNames)}"}]</search>`)
    case "call": {
      const seen = context.tools.map((t) => t.name)
      const name = seen.length > 0 ? r.pick(seen) : r.pick(toolNames)
      const q = r.next() < 0.3 ? `{"$ref":"c${1 + r.int(3)}.echo.q"}` : `"x${r.int(10)}"`
      return text(`<call>[{"name":"${name}","arguments":{"q":${q}}},{"name":"${r.pick(toolNames)}","arguments":{"q":"y"}}]</call>`)
    }
    case "huge": {
      const body = r.pick(["A", "a ", "<", "{\"", "Zürich 42 "]).repeat(50_000 + r.int(500_000))
      return text(r.next() < 0.5 ? `<answer>${body}</answer>` : `<think>${body}</think><search>[{"slot":"s1","query":"${body.slice(0, 10_000)}"}]</search>`)
    }
    case "nonFinite": {
      const bad = r.pick([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -1, 1e308 * 10])
      return Effect.succeed({
        text: r.next() < 0.5 ? "<answer>done</answer>" : `<search>[{"slot":"s1","query":"alpha"}]</search>`,
        usage: { promptTokens: bad, completionTokens: r.pick([bad, 3]) },
        logprob: r.pick([bad, Number.NaN, Number.NEGATIVE_INFINITY, -0.5]),
        tokenLogprobs: [bad, -0.1]
      })
    }
    case "throw": throw new Error(`hostile policy threw on round ${context.round}`)
    case "die": return Effect.die(new TypeError("cannot read properties of undefined (reading 'x')"))
    case "fail": return Effect.fail(new PolicyError({ message: "hostile endpoint: 500" }))
    case "think": return text(`<think>not yet, round ${context.round}</think>`)
    case "answer": return text(`<answer>the answer is ${r.int(100)}</answer>`)
    case "slow": return Effect.as(Effect.sleep(`${200 + r.int(300)} millis`), { text: "<answer>late</answer>", usage: usage("late") })
    case "never": return Effect.never
  }
}

const paradigms: ReadonlyArray<Paradigm> = ["ParaAct", "ReAct", "ExploreThenExecute", "DFSDT"]

const task = (i: number): Task => ({
  id: taskId(`fuzz-${i}`),
  request: `use ${toolNames[i % toolNames.length]} then ${toolNames[(i + 1) % toolNames.length]}`,
  level: i % 2 === 0 ? "I2" : "I3",
  categories: ["Fuzzing"],
  gold: [],
  facts: [],
  split: "test",
  seed: i,
  source: "fuzz"
})

const decodeTrajectoryJson = Schema.decodeUnknownSync(Schema.fromJsonString(Trajectory))

const runtimeFuzz = Effect.gen(function*() {
  const log = new Map<number, Array<Behaviour>>()
  const started = new Map<number, number>()
  const policyLayer = Layer.succeed(
    Policy,
    Policy.of({
      name: "hostile",
      privileged: false,
      act: (context) => {
        if (!started.has(context.seed)) started.set(context.seed, performance.now())
        return hostileAct(context, log)
      }
    })
  )
  const rolloutLayer = Rollout.layer({ faults: false, maxRounds: 12, policyTimeout: "100 millis", callTimeout: "100 millis", rolloutTimeout: "5 seconds", concurrency: 8 }).pipe(
    Layer.provide(Layer.mergeAll(libraryLayer, retrieverLayer, simulatorLayer, policyLayer))
  )
  const rollout = yield* Effect.provide(Rollout, rolloutLayer)
  const times: Array<number> = []
  const counts = { crashes: 0, hangs: 0, lost: 0, undecodable: 0 }
  const stops: Record<string, number> = {}
  const repros: Array<string> = []
  const chunk = 250
  for (let from = 0; from < flags.rollouts; from += chunk) {
    const requests: Array<RolloutRequest> = []
    for (let i = from; i < Math.min(flags.rollouts, from + chunk); i++) {
      requests.push({ task: task(i), options: { paradigm: paradigms[i % paradigms.length] as Paradigm, seed: i, groupIndex: i % 4 } })
    }
    const finished = new Map<number, number>()
    const exit = yield* rollout.runAll(requests, { concurrency: 32, onDone: (t) => Effect.sync(() => finished.set(t.seed, performance.now())) }).pipe(
      // a whole chunk stuck far past every rollout's own budget is a hang of the runtime
      Effect.timeoutOption(rolloutHangMs * 6),
      Effect.exit
    )
    if (Exit.isFailure(exit)) {
      counts.crashes++
      counts.lost += requests.length
      if (repros.length < reproLimit) {
        repros.push(writeRepro("runtime-crash", from, `${Cause.pretty(exit.cause)}\nseeds ${from}..${from + requests.length - 1}\n${requests.map((q) => `${q.options.seed} ${q.options.paradigm} ${(log.get(q.options.seed) ?? []).join(",")}`).join("\n")}`))
      }
      continue
    }
    if (Option.isNone(exit.value)) {
      const unfinished = requests.filter((q) => !finished.has(q.options.seed))
      counts.hangs += unfinished.length
      counts.lost += unfinished.length
      if (repros.length < reproLimit) {
        repros.push(writeRepro("runtime-hang", from, unfinished.map((q) => `${q.options.seed} ${q.options.paradigm} ${(log.get(q.options.seed) ?? []).join(",")}`).join("\n")))
      }
      continue
    }
    const out = exit.value.value
    counts.lost += Math.max(0, requests.length - out.length)
    requests.forEach((q, k) => {
      const t = out[k]
      if (t === undefined || t.seed !== q.options.seed) {
        if (t !== undefined) counts.lost++
        return
      }
      stops[t.stop] = (stops[t.stop] ?? 0) + 1
      const wall = (finished.get(t.seed) ?? 0) - (started.get(t.seed) ?? finished.get(t.seed) ?? 0)
      const ms = Math.max(wall, t.durationMs)
      times.push(ms)
      if (ms > rolloutHangMs) counts.hangs++
      let decoded = false
      try {
        decoded = isDeepStrictEqual(decodeTrajectoryJson(JSON.stringify(t)), t)
      } catch {
        decoded = false
      }
      if (!decoded) {
        counts.undecodable++
        if (repros.filter((p) => p.includes("undecodable")).length < 1) {
          repros.push(writeRepro("runtime-undecodable", t.seed, `${t.seed} ${q.options.paradigm} ${(log.get(t.seed) ?? []).join(",")}\n${JSON.stringify(t).slice(0, 200_000)}`))
        }
      }
    })
  }
  const sorted = Float64Array.from(times).sort()
  return { rollouts: flags.rollouts, ...counts, stops, repros, p50Ms: quantile(sorted, 0.5), p99Ms: quantile(sorted, 0.99), maxMs: sorted[sorted.length - 1] ?? 0 }
})

// ---------------------------------------------------------------------------------------------------------------

const wallStart = performance.now()
const parser = parserFuzz()
const parserSeconds = (performance.now() - wallStart) / 1000
const runtimeStart = performance.now()
const runtime = await Effect.runPromise(runtimeFuzz)
const runtimeSeconds = (performance.now() - runtimeStart) / 1000

const ms = (x: number) => x.toFixed(2).padStart(9)
console.log(`fuzz, seed ${flags.seed}: ${parser.inputs} model outputs × {strict, lenient}; ${runtime.rollouts} hostile-policy rollouts in ${paradigms.length} paradigms`)
console.log("part      inputs  crashes  hangs  lost  undecodable  reprint   p50 ms    p99 ms    max ms   wall s")
console.log(`parser  ${String(parser.parses).padStart(8)} ${String(parser.counts.crash).padStart(8)} ${String(parser.counts.hang).padStart(6)} ${"-".padStart(5)} ${String(parser.counts.undecodable).padStart(12)} ${String(parser.counts.reprint).padStart(8)} ${ms(parser.p50Ms)} ${ms(parser.p99Ms)} ${ms(parser.maxMs)} ${parserSeconds.toFixed(1).padStart(8)}`)
console.log(`runtime ${String(runtime.rollouts).padStart(8)} ${String(runtime.crashes).padStart(8)} ${String(runtime.hangs).padStart(6)} ${String(runtime.lost).padStart(5)} ${String(runtime.undecodable).padStart(12)} ${"-".padStart(8)} ${ms(runtime.p50Ms)} ${ms(runtime.p99Ms)} ${ms(runtime.maxMs)} ${runtimeSeconds.toFixed(1).padStart(8)}`)
console.log(`slowest parse: ${parser.slowest.ms.toFixed(1)} ms, a ${parser.slowest.kind} input of ${parser.slowest.chars} chars (${parser.slowest.lenient ? "lenient" : "strict"})`)
console.log(`stop reasons: ${Object.entries(runtime.stops).map(([k, v]) => `${k} ${v}`).join(", ")}`)
if (Object.keys(parser.byKind).length > 0) console.log(`parser findings by input kind: ${Object.entries(parser.byKind).map(([k, v]) => `${k} ${v}`).join(", ")}`)
for (const file of [...parser.repros, ...runtime.repros]) console.log(`reproducer: ${file}`)
const failures = parser.counts.crash + parser.counts.hang + parser.counts.undecodable + parser.counts.reprint + runtime.crashes + runtime.hangs + runtime.lost + runtime.undecodable
console.log(failures === 0 ? "OK: no crash, hang, lost or undecodable result" : `FAILED: ${failures} findings`)
if (flags.json) {
  console.log(JSON.stringify({
    parser: { inputs: parser.inputs, crashes: parser.counts.crash, hangs: parser.counts.hang, undecodable: parser.counts.undecodable, reprint: parser.counts.reprint, p99Ms: parser.p99Ms, maxMs: parser.maxMs },
    runtime: { rollouts: runtime.rollouts, crashes: runtime.crashes, hangs: runtime.hangs, lost: runtime.lost, undecodable: runtime.undecodable, p99Ms: runtime.p99Ms, maxMs: runtime.maxMs }
  }))
}
process.exitCode = failures === 0 ? 0 : 1

import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Ref, Result } from "effect"
import { callId } from "../../src/domain/Ids.ts"
import type { Task } from "../../src/domain/Task.ts"
import type { Step, Trajectory } from "../../src/domain/Trajectory.ts"
import type { Turn } from "../../src/domain/Turn.ts"
import * as ActionSpace from "../../src/agent/ActionSpace.ts"
import { operationKey } from "../../src/agent/actions/Seen.ts"
import { cover, keyWordsOf, leaves, tokens } from "../../src/agent/actions/Text.ts"
import * as LearnedPolicy from "../../src/agent/LearnedPolicy.ts"
import { Policy } from "../../src/agent/Policy.ts"
import type { PolicyContext } from "../../src/agent/Policy.ts"
import * as Teacher from "../../src/agent/Teacher.ts"
import { callKey } from "../../src/math/CanonicalJson.ts"
import * as History from "../../src/math/History.ts"
import * as PlanDag from "../../src/math/PlanDag.ts"
import { rng } from "../../src/math/Random.ts"
import type { Rng } from "../../src/math/Random.ts"
import * as SetScorer from "../../src/math/SetScorer.ts"
import * as TurnDistribution from "../../src/math/TurnDistribution.ts"
import * as ParaAct from "../../src/protocol/ParaAct.ts"
import * as Refs from "../../src/protocol/Refs.ts"
import { appLayer, contextOf, rollouts, sampleTasks } from "../support/LearnedWorld.ts"

describe("clausesOf / literalsOf", () => {
  it("drops openers and joining words, one clause per sentence", () => {
    assert.deepStrictEqual(
      ActionSpace.clausesOf("Hi! Tell me the continent of the country \"Ghana\". At the same time, what is the author of the recipe \"Garlicky Duck Pie\"?"),
      ["Tell me the continent of the country \"Ghana\".", "what is the author of the recipe \"Garlicky Duck Pie\"?"]
    )
    assert.deepStrictEqual(
      ActionSpace.clausesOf("Quick question: Get the rating. Also, show the weather. Plus, list the top 3 movies. Separately, name one."),
      ["Get the rating.", "show the weather.", "list the top 3 movies.", "name one."]
    )
    assert.deepStrictEqual(ActionSpace.clausesOf("I need some help. Give me the price. In addition, the stock."), ["Give me the price.", "the stock."])
    assert.deepStrictEqual(ActionSpace.clausesOf("For a report I'm writing: Tell me the downloads."), ["Tell me the downloads."])
    assert.deepStrictEqual(ActionSpace.clausesOf("Can you help me out? What is the capital?"), ["What is the capital?"])
    // a lower-case word after a period is no new sentence; a request of openers only is kept whole
    assert.deepStrictEqual(ActionSpace.clausesOf("Find the avg. rating of it."), ["Find the avg. rating of it."])
    assert.deepStrictEqual(ActionSpace.clausesOf("Hello!"), ["Hello!"])
  })

  it("does not split inside a quoted value that holds a period, and ends a sentence at a quote that closes it", () => {
    const clauses = ActionSpace.clausesOf("Find the company \"Acme Inc. Holdings\". Also, list the top 3 players by assists.")
    assert.deepStrictEqual(clauses, ["Find the company \"Acme Inc. Holdings\".", "list the top 3 players by assists."])
    assert.deepStrictEqual(
      ActionSpace.literalsOf(clauses).map((l) => [l.value, l.kind, l.clause]),
      [["Acme Inc. Holdings", "quoted", 0], ["3", "number", 1]]
    )
    assert.deepStrictEqual(
      ActionSpace.clausesOf("What is the price of the product \"Mr. Clean 2.0\"? Plus, give me 3 reviews."),
      ["What is the price of the product \"Mr. Clean 2.0\"?", "give me 3 reviews."]
    )
    assert.deepStrictEqual(ActionSpace.clausesOf("Find the film \"Dr. No.\" Then, list its cast."), ["Find the film \"Dr. No.\"", "list its cast."])
    assert.deepStrictEqual(ActionSpace.clausesOf("Show \"A. B. C.\" please. Then, the rest."), ["Show \"A. B. C.\" please.", "the rest."])
  })

  it("reads numbers and ISO dates as literals, with the words before them as the label", () => {
    const clauses = ActionSpace.clausesOf(
      "What was the wind speed of the first of the cities with climate zone \"humid subtropical\" on 2024-04-13? And list items rated 4.5 or -2, top 3, v1.2, x2, 10%."
    )
    assert.strictEqual(clauses.length, 2)
    const literals = ActionSpace.literalsOf(clauses)
    assert.deepStrictEqual(
      literals.map((l) => [l.value, l.kind, l.clause]),
      [["humid subtropical", "quoted", 0], ["2024-04-13", "date", 0], ["4.5", "number", 1], ["-2", "number", 1], ["3", "number", 1], ["10", "number", 1]]
    )
    // the label is the stemmed content words of the (up to) four words before the value
    assert.isTrue(literals[0]!.label.has("zone"))
    assert.isTrue(literals[2]!.label.has("item"))
    // a quoted value's digits are not read again as numbers
    assert.deepStrictEqual(ActionSpace.literalsOf(["Get \"Model 3 X\" and 7."]).map((l) => l.value), ["Model 3 X", "7"])
  })
  it("counts the values a clause asks for: its items times the attributes it names, not a range's or another request's \"and\"", () => {
    const asked = (clause: string) => [ActionSpace.attributesAsked(clause), ActionSpace.requestedValues(clause)]
    assert.deepStrictEqual(asked("What is the position of the player \"Yasmin Bhatt\"?"), [1, 1])
    assert.deepStrictEqual(asked("find the wins this season and league of the first of the teams with home city \"Fort Halmere\"."), [2, 2])
    assert.deepStrictEqual(asked("what are the rating (out of 5) and street address of the restaurant \"Bluly Brasserie\"?"), [2, 2])
    assert.deepStrictEqual(asked("what are the rating, address and phone of the hotel \"Y\"?"), [3, 3])
    // a range's "and", and "and" inside quotes or parentheses, join no attribute
    assert.deepStrictEqual(asked("what were the average and the highest response time (ms) of the first of the monitors with interval (s) \"30\" between 2024-04-01 and 2024-04-14?"), [2, 2])
    assert.deepStrictEqual(asked("Find the rating of the film \"Pride and Prejudice\" (drama and romance)."), [1, 1])
    // an "and" that opens another request
    assert.deepStrictEqual(asked("Look up the recipe \"Crispy Salmon Noodles\" and give me its cuisine."), [1, 1])
    assert.deepStrictEqual(asked("please book a table for the restaurant \"X\" (party size 4) and give me the reservation id and the status."), [2, 2])
    // a list: the items it counts
    assert.deepStrictEqual(asked("List the first three domains with registrar \"Hover\"."), [1, 3])
    assert.deepStrictEqual(asked("list the top 5 video games by price."), [1, 5])
  })

  it("counts the records of one list a clause's answer may draw on: its number, every record for a list without one, else one", () => {
    assert.strictEqual(ActionSpace.recordsAsked("List the first three domains with registrar \"Hover\"."), 3)
    assert.strictEqual(ActionSpace.recordsAsked("name the top 3 banks by total assets."), 3)
    assert.strictEqual(ActionSpace.recordsAsked("Name all the domains hosted there of the IP address with the highest threat score (0-100)."), Infinity)
    assert.strictEqual(ActionSpace.recordsAsked("Which are all the invoices of the first of the companies with industry \"Transportation\"?"), Infinity)
    assert.strictEqual(ActionSpace.recordsAsked("List all the posts of the user \"Lior Lindqvist\"."), Infinity)
    assert.strictEqual(ActionSpace.recordsAsked("find the wins this season and league of the first of the teams with home city \"Fort Halmere\"."), 1)
    assert.strictEqual(ActionSpace.recordsAsked("What is the monthly visits of the domain \"blunashop.com\"?"), 1)
    // the items a list counts stay what the quota reads (3 for a list without a number)
    assert.strictEqual(ActionSpace.requestedValues("List all the posts of the user \"Lior Lindqvist\"."), 3)
  })

  it("reads a clause's head: what it asks for, before the \"of\" that opens the thing it is asked of", () => {
    assert.strictEqual(ActionSpace.headPhrase("Find the number of posts and trending rank of the hashtag \"#x\"."), "Find the number of posts and trending rank")
    assert.strictEqual(ActionSpace.headPhrase("Name all the domains hosted there of the IP address with the highest threat score (0-100)."), "Name all the domains hosted there")
    assert.strictEqual(ActionSpace.headPhrase("Tell me the critic score (0-100) and developer of the first of the video games with genre \"MOBA\"."), "Tell me the critic score and developer")
    // no "of" that opens a new phrase: the clause is its own head (without quotes and closing punctuation)
    assert.strictEqual(ActionSpace.headPhrase("List the first three domains with registrar \"Hover\"."), "List the first three domains with registrar")
    assert.strictEqual(ActionSpace.headPhrase("What is the number of ratings?"), "What is the number of ratings")
    // its words name attributes: not the words that count, ask or number
    assert.deepStrictEqual([...ActionSpace.headWords("Find the number of posts and trending rank of the hashtag \"#x\".")], ["number", "post", "trend", "rank"])
    assert.deepStrictEqual([...ActionSpace.headWords("List the first three domains with registrar \"Hover\".")], ["domain", "registrar"])
    assert.deepStrictEqual([...ActionSpace.headWords("What is the threat score (0-100) of the IP address with the highest threat score (0-100)?")], ["threat", "score"])
  })
})

// ---------------------------------------------------------------------------------------------------------------
// Real rollouts: the learned policy (seeded initial weights) and the teacher on 12 held-out tasks.

interface Collected {
  readonly tasks: ReadonlyArray<Task>
  readonly learned: ReadonlyArray<Trajectory>
  readonly teacher: ReadonlyArray<Trajectory>
  /** Contexts the learned policy was given, by rollout seed and round. */
  readonly learnedContexts: ReadonlyArray<PolicyContext>
  readonly teacherContexts: ReadonlyArray<PolicyContext>
}

const learnedSeed = 100
const teacherSeed = 300

/** A policy layer that records every context before delegating to `inner`. */
const capturing = <E, R>(inner: Layer.Layer<Policy, E, R>, seen: Array<PolicyContext>) =>
  Layer.effect(Policy, Effect.gen(function*() {
    const policy = yield* Policy
    return Policy.of({ ...policy, act: (context) => Effect.suspend(() => {
      seen.push(context)
      return policy.act(context)
    }) })
  })).pipe(Layer.provide(inner))

/** The learned policy over a fresh cell of `LearnedPolicy.initial(1)`, recording its contexts. */
const learnedCapturing = (seen: Array<PolicyContext>) =>
  capturing(Layer.effect(Policy, Effect.map(Ref.make(LearnedPolicy.initial(1)), (cell) => LearnedPolicy.make(cell))), seen)

let collected: Promise<Collected> | undefined
const collect = (): Promise<Collected> =>
  (collected ??= Effect.runPromise(Effect.gen(function*() {
    const learnedContexts: Array<PolicyContext> = []
    const teacherContexts: Array<PolicyContext> = []
    const { learned, tasks } = yield* Effect.gen(function*() {
      const tasks = yield* sampleTasks("test", 12)
      return { tasks, learned: yield* rollouts(tasks, learnedSeed) }
    }).pipe(Effect.provide(appLayer(learnedCapturing(learnedContexts))))
    const teacher = yield* rollouts(tasks, teacherSeed).pipe(Effect.provide(appLayer(capturing(Teacher.layer(), teacherContexts))))
    return { tasks, learned, teacher, learnedContexts, teacherContexts }
  })))

const data = Effect.promise(collect)

/** Every step of every trajectory with its task and the rebuilt context. */
const stepsOf = (d: Collected, which: "learned" | "teacher") =>
  d[which].flatMap((trajectory, t) =>
    trajectory.steps.map((step) => ({ trajectory, step, task: d.tasks[t] as Task, context: contextOf(trajectory, step.index, d.tasks[t] as Task) })))

/** A random choice of kind `k`: a random non-empty subset, one candidate, or nothing, and a random plan bit. */
const randomChoiceOf = (layout: TurnDistribution.Layout, k: number, r: Rng): TurnDistribution.Choice => {
  const slot = layout.kinds[k] as TurnDistribution.KindSlot
  const rows = Array.from({ length: slot.end - slot.start }, (_, i) => slot.start + i)
  let selected: Array<number> = []
  if (slot.mode === "one") selected = [r.pick(rows)]
  if (slot.mode === "subset") {
    selected = rows.filter(() => r.next() < 0.35)
    if (selected.length === 0) selected = [r.pick(rows)]
  }
  return { kind: k, selected, plan: slot.plan && r.next() < 0.5 }
}

const actionCount = (turn: Turn): number => (turn.answer !== undefined ? 1 : turn.searches.length + turn.calls.length)

describe("ActionSpace.build on real contexts", () => {
  it.effect("offers yes/no leaves as facts, and marks one display field per list item", () =>
    Effect.gen(function*() {
      const d = yield* data
      // the candidate block follows the row type and the context
      const offset = ActionSpace.candidateOffset
      let booleans = 0
      let displays = 0
      for (const { context } of [...stepsOf(d, "learned"), ...stepsOf(d, "teacher")]) {
        const space = ActionSpace.build(context)
        const k = space.kinds.indexOf("answer")
        const slot = space.layout.kinds[k] as TurnDistribution.KindSlot
        const perItem = new Map<string, number>()
        space.facts.forEach((f, i) => {
          const row = (slot.start + i) * ActionSpace.width + offset
          const yesNo = space.features[row + 16] as number
          assert.strictEqual(yesNo, f.value === "true" || f.value === "false" ? 1 : 0, f.label)
          if (yesNo === 1) booleans++
          if (space.features[row + 22] === 1) {
            displays++
            const at = f.path.findIndex((p) => typeof p === "number")
            assert.isAtLeast(at, 0, "a display field belongs to a list item")
            const item = `${f.callId}:${f.path.slice(0, at + 1).join(".")}`
            perItem.set(item, (perItem.get(item) ?? 0) + 1)
          }
        })
        for (const [item, n] of perItem) assert.strictEqual(n, 1, item)
      }
      assert.isAbove(booleans, 0, "some observation holds a yes/no value")
      assert.isAbove(displays, 0, "some observation holds a list")
    }))

  it.effect("the head columns (fact columns 23–25) read the clause's head against the fact's key path, its own key, and its call's other keys", () =>
    Effect.gen(function*() {
      const d = yield* data
      const offset = ActionSpace.candidateOffset
      let named = 0
      let best = 0
      for (const { context } of [...stepsOf(d, "learned"), ...stepsOf(d, "teacher")]) {
        const space = ActionSpace.build(context)
        const slot = space.layout.kinds[space.kinds.indexOf("answer")] as TurnDistribution.KindSlot
        const column = (i: number, j: number) => space.features[(slot.start + i) * ActionSpace.width + offset + j] as number
        space.facts.forEach((f, i) => {
          const head = (f.clause ?? -1) >= 0 ? ActionSpace.headWords(space.clauses[f.clause as number] as string) : new Set<string>()
          const pathWords = tokens(f.path.filter((p) => typeof p === "string").join(" "))
          assert.closeTo(column(i, 23), cover(head, pathWords), 1e-12, f.label)
          assert.closeTo(column(i, 24), cover(keyWordsOf(f.path), head), 1e-12, f.label)
          if (column(i, 24) > 0) named++
          if (column(i, 25) === 1) {
            best++
            assert.isAbove(column(i, 24), 0)
            space.facts.forEach((g, j) => {
              if (g.callId === f.callId) assert.isAtMost(column(j, 24), column(i, 24), `${g.label} against ${f.label}`)
            })
          } else assert.strictEqual(column(i, 25), 0)
        })
      }
      assert.isAbove(named, 0, "some fact's key names its clause's head")
      assert.isAbove(best, 0)
    }))

  it.effect("the record columns (fact columns 26–27): the fact's list item, or its whole payload, holds its clause's quoted value, or only another clause's", () =>
    Effect.gen(function*() {
      const d = yield* data
      const offset = ActionSpace.candidateOffset
      let own = 0
      let other = 0
      for (const { context } of [...stepsOf(d, "learned"), ...stepsOf(d, "teacher")]) {
        const space = ActionSpace.build(context)
        const slot = space.layout.kinds[space.kinds.indexOf("answer")] as TurnDistribution.KindSlot
        const payloads = History.of(context.history).outputs
        const quoted = ActionSpace.literalsOf(space.clauses).filter((l) => l.kind === "quoted")
        const recordOf = (path: ReadonlyArray<string | number>) => {
          const at = path.findIndex((p) => typeof p === "number")
          return at < 0 ? "" : path.slice(0, at + 1).join(".")
        }
        space.facts.forEach((f, i) => {
          const column = (j: number) => space.features[(slot.start + i) * ActionSpace.width + offset + j] as number
          const record = recordOf(f.path)
          const values = new Set(leaves(payloads.get(f.callId)!, ActionSpace.defaultSpaceOptions.itemsPerArray)
            .filter((leaf) => recordOf(leaf.path) === record).map((leaf) => String(leaf.value).toLowerCase()))
          const holds = (mine: boolean) => quoted.some((l) => (l.clause === f.clause) === mine && values.has(l.value.toLowerCase()))
          assert.strictEqual(column(26), holds(true) ? 1 : 0, f.label)
          assert.strictEqual(column(27), !holds(true) && holds(false) ? 1 : 0, f.label)
          own += column(26)
          other += column(27)
        })
      }
      assert.isAbove(own, 0, "some fact's record holds its clause's quoted value")
      assert.isAbove(other, 0, "some fact's record holds only another clause's")
    }))

  it.effect("the readiness block (context columns 20–23) summarises the round's facts: clauses with a likely answer, with a key that meets them, new facts, how full the pool is", () =>
    Effect.gen(function*() {
      const d = yield* data
      const ctx = ActionSpace.featureSchema.rowTypes.length
      const fact = ActionSpace.candidateOffset
      let answered = 0
      let fresh = 0
      for (const { context } of [...stepsOf(d, "learned"), ...stepsOf(d, "teacher")]) {
        const space = ActionSpace.build(context)
        const clauses = Math.max(1, ActionSpace.clausesOf(context.request).length)
        const slot = space.layout.kinds[space.kinds.indexOf("answer")] as TurnDistribution.KindSlot
        const likely = new Set<number>()
        const named = new Set<number>()
        space.facts.forEach((f, i) => {
          const row = (slot.start + i) * ActionSpace.width + fact
          if ((f.clause ?? -1) < 0) return
          if ((space.features[row + 20] as number) > 0 || (space.features[row + 21] as number) > 0) likely.add(f.clause as number)
          if ((space.features[row + 13] as number) > 0) named.add(f.clause as number)
        })
        const last = context.history.at(-1)
        const lastCalls = new Set((last?.observations ?? []).map((o) => o.callId as string))
        const expected = [likely.size / clauses, named.size / clauses, space.facts.some((f) => lastCalls.has(f.callId)) ? 1 : 0, Math.min(1, space.facts.length / ActionSpace.defaultSpaceOptions.factsTotal)]
        // every row carries the same context, the readiness block included
        for (let row = 0; row < space.layout.rows; row++) {
          expected.forEach((x, j) => assert.closeTo(space.features[row * ActionSpace.width + ctx + 20 + j] as number, x, 1e-12, `row ${row} column ${20 + j}`))
        }
        if ((expected[0] as number) > 0) answered++
        if (expected[2] === 1) fresh++
      }
      assert.isAbove(answered, 0, "some round has a clause with a likely answer")
      assert.isAbove(fresh, 0, "some round's last step brought facts")
    }))

  it.effect("marks a call whose request literals no successful call carried yet (the request's other item is still to do)", () =>
    Effect.gen(function*() {
      const d = yield* data
      const offset = ActionSpace.candidateOffset
      let served = 0
      let fresh = 0
      for (const { context } of [...stepsOf(d, "learned"), ...stepsOf(d, "teacher")]) {
        const space = ActionSpace.build(context)
        const carried = new Set(context.history.flatMap((s) =>
          s.observations.flatMap((o) => (o.outcome._tag === "ok" ? Object.values(o.arguments).filter((v) => v !== null && typeof v !== "object").map(String) : []))))
        const k = space.kinds.indexOf("call")
        if (k < 0) continue
        const slot = space.layout.kinds[k] as TurnDistribution.KindSlot
        space.calls.forEach((c, i) => {
          const literals = Object.values(c.arguments).filter((_, j) => c.sources[j] === "literal").map(String)
          const expected = literals.length === 0 ? 0 : literals.filter((v) => !carried.has(v)).length / literals.length
          assert.closeTo(space.features[(slot.start + i) * ActionSpace.width + offset + 25] as number, expected, 1e-12, `${c.tool.name} ${JSON.stringify(c.arguments)}`)
          if (literals.length > 0 && expected === 0) served++
          if (literals.length > 0 && expected === 1 && carried.size > 0) fresh++
        })
      }
      assert.isAbove(served, 0, "some call repeats a literal a successful call carried")
      assert.isAbove(fresh, 0, "some call after a success carries a literal none carried")
    }))

  it.effect("marks a call that repeats a successful operation: a tool of the same name words (another provider's) with the same argument values", () =>
    Effect.gen(function*() {
      const d = yield* data
      // written out here: the name's words without the provider suffix, and the resolved values as a sorted list
      const nameWords = (tool: string) => [...tokens(tool.replace(/_for_.*$/, "").replace(/_/g, " "))].sort().join(" ")
      const valuesOf = (args: Record<string, unknown>) => Object.values(args).map((v) => (v !== null && typeof v === "object" ? JSON.stringify(v) : String(v))).sort().join("\u0000")
      let repeats = 0
      let otherProvider = 0
      let fresh = 0
      for (const { context } of [...stepsOf(d, "learned"), ...stepsOf(d, "teacher")]) {
        const space = ActionSpace.build(context)
        const history = History.of(context.history)
        const done = context.history.flatMap((s) => s.observations.filter((o) => o.outcome._tag === "ok"))
        space.calls.forEach((c) => {
          const resolved = Refs.resolveRefs(c.arguments, (id) => history.outputs.get(id)).arguments
          const same = done.filter((o) => nameWords(o.tool) === nameWords(c.tool.name) && valuesOf(o.arguments) === valuesOf(resolved))
          assert.strictEqual(c.repeats, same.length > 0, `${c.tool.name} ${JSON.stringify(resolved)}`)
          if (c.repeats) repeats++
          if (same.some((o) => o.tool !== c.tool.name)) otherProvider++
          if (!c.repeats && done.length > 0) fresh++
        })
      }
      assert.isAbove(repeats, 0, "some call repeats a successful operation")
      assert.isAbove(otherProvider, 0, "some repeat is another provider's tool")
      assert.isAbove(fresh, 0, "some call after a success does something new")
      // the key itself: providers' names and parameter names differ, the operation does not
      assert.strictEqual(operationKey("musical_key_songs_for_rapid_song", { key: "D major" }), operationKey("songs_by_musical_key_for_ultra_tune", { keyFilter: "D major" }))
      assert.strictEqual(operationKey("top_countries_by_life_expectancy_for_query_kit_pro", {}), operationKey("top_countries_by_life_expectancy_for_info_kit_lite", {}))
      assert.notStrictEqual(operationKey("get_company_founded_for_rapid_venture", { id: "CMP-1" }), operationKey("get_company_revenue_for_rapid_venture", { id: "CMP-1" }))
      assert.notStrictEqual(operationKey("orders_by_status_for_buy_live", { status: "pending" }), operationKey("orders_by_status_for_mall_engine", { status: "shipped" }))
      assert.notStrictEqual(operationKey("pair_for_x", { a: "1", b: "1" }), operationKey("pair_for_y", { a: "1" }))
    }))

  it.effect("marks a call that would open its clause: no successful call served the clause yet, every required parameter filled, the arguments valid, not settled", () =>
    Effect.gen(function*() {
      const d = yield* data
      const offset = ActionSpace.candidateOffset
      let opens = 0
      let served = 0
      for (const { context } of [...stepsOf(d, "learned"), ...stepsOf(d, "teacher")]) {
        const space = ActionSpace.build(context)
        const k = space.kinds.indexOf("call")
        if (k < 0) continue
        const slot = space.layout.kinds[k] as TurnDistribution.KindSlot
        space.calls.forEach((c, i) => {
          const f = (col: number) => space.features[(slot.start + i) * ActionSpace.width + offset + col] as number
          // columns 5 (required filled), 12 (arguments valid), 13 (settled before), 16 (clause succeeded): docs/training.md §1
          const want = c.clause >= 0 && f(16) === 0 && f(5) === 1 && f(12) === 1 && f(13) === 0
          assert.strictEqual(c.opensClause, want, `${c.tool.name} ${JSON.stringify(c.arguments)}`)
          if (c.opensClause) opens++
          if (c.clause >= 0 && f(16) === 1) served++
        })
      }
      assert.isAbove(opens, 0)
      assert.isAbove(served, 0)
    }))

  it.effect("is deterministic, well laid out, finite, and independent of the order the tools come in", () =>
    Effect.gen(function*() {
      const d = yield* data
      const steps = [...stepsOf(d, "learned"), ...stepsOf(d, "teacher")]
      assert.isAbove(steps.length, 40)
      let withCalls = 0
      for (const { context, step } of steps) {
        const space = ActionSpace.build(context)
        const again = ActionSpace.build(context)
        assert.strictEqual(ActionSpace.digest(again), ActionSpace.digest(space))
        assert.deepStrictEqual(again.layout, space.layout)
        assert.strictEqual(ActionSpace.digest(ActionSpace.build({ ...context, tools: [...context.tools].reverse() })), ActionSpace.digest(space))
        assert.isUndefined(TurnDistribution.validate(space.layout))
        // the sets rows are scored against: a kind row and its search / call candidates read the kind's candidates,
        // the answer row every fact, a fact the facts of its own clause, the plan row every candidate
        const sets = space.layout.sets!
        assert.isUndefined(SetScorer.validateSets(sets, space.layout.rows))
        const membersOf = (row: number) => sets.members[sets.reads[row]!]!
        space.layout.kinds.forEach((slot, k) => {
          const range = Array.from({ length: slot.end - slot.start }, (_, j) => slot.start + j)
          assert.deepStrictEqual(membersOf(slot.row), range)
          if (space.kinds[k] !== "answer") range.forEach((r) => assert.strictEqual(sets.reads[r], sets.reads[slot.row]))
          else {
            space.facts.forEach((f, j) => {
              const clause = membersOf(slot.start + j).map((r) => space.facts[r - slot.start]!.clause ?? -1)
              assert.include(membersOf(slot.start + j), slot.start + j)
              assert.isTrue(clause.every((c) => c === (f.clause ?? -1)))
            })
          }
        })
        assert.strictEqual(membersOf(space.layout.planRow!).length, space.layout.kinds.reduce((n, slot) => n + slot.end - slot.start, 0))
        assert.strictEqual(space.features.length, space.layout.rows * ActionSpace.width)
        assert.isTrue(space.features.every(Number.isFinite), `step ${step.index}: a non-finite feature`)
        // one kind entry per slot, the answer always available, candidates only for kinds offered
        assert.strictEqual(space.kinds.length, space.layout.kinds.length)
        assert.strictEqual(space.kinds.at(-1), "answer")
        const slotOf = (kind: ActionSpace.Kind) => space.layout.kinds[space.kinds.indexOf(kind)]
        const count = (kind: ActionSpace.Kind) => {
          const slot = slotOf(kind)
          return slot === undefined ? 0 : slot.end - slot.start
        }
        assert.strictEqual(count("search"), space.searches.length)
        assert.strictEqual(count("call"), space.calls.length)
        assert.strictEqual(count("answer"), space.facts.length)
        if (context.controller === "Answer") assert.deepStrictEqual(space.kinds, ["answer"])
        // a learned step's recorded digest is what the rebuilt context gives
        if (step.decision !== undefined) assert.strictEqual(step.decision.digest, ActionSpace.digest(space))
        if (space.calls.length > 0) withCalls++
      }
      assert.isAbove(withCalls, 5)
    }))

  it.effect("turns every valid choice into a turn the protocol accepts, with fresh call ids and seen tools only", () =>
    Effect.gen(function*() {
      const d = yield* data
      const r = rng(2025)
      const kindsSeen = new Set<string>()
      let turns = 0
      for (const { context } of [...stepsOf(d, "learned"), ...stepsOf(d, "teacher")]) {
        const space = ActionSpace.build(context)
        const used = History.of(context.history).callIds
        assert.deepStrictEqual(space.usedCallIds, used)
        const seenTools = new Set(context.tools.map((t) => t.name as string))
        const logits = Float64Array.from({ length: space.layout.rows }, () => 2 * r.normal())
        const choices = [
          ...space.layout.kinds.map((_, k) => randomChoiceOf(space.layout, k, r)),
          ...Array.from({ length: 3 }, () => TurnDistribution.sample(space.layout, logits, r.next))
        ]
        for (const choice of choices) {
          assert.isTrue(Number.isFinite(TurnDistribution.logProb(space.layout, logits, choice)))
          const turn = ActionSpace.toTurn(space, choice)
          kindsSeen.add(space.kinds[choice.kind] as string)
          turns++
          assert.isTrue(Result.isSuccess(ParaAct.validateTurn(turn, { usedCallIds: used })))
          const parsed = ParaAct.parseTurn(ParaAct.printTurn(turn), { usedCallIds: used, nextCallIndex: used.length + 1 })
          if (Result.isFailure(parsed)) return assert.fail(`${parsed.failure.message}\n${ParaAct.printTurn(turn)}`)
          assert.deepStrictEqual(parsed.success, turn)
          assert.strictEqual(actionCount(turn), turn.answer !== undefined ? 1 : choice.selected.length)
          const ids = turn.calls.map((c) => c.id as string)
          assert.strictEqual(new Set(ids).size, ids.length)
          for (const id of ids) assert.notInclude(used as ReadonlyArray<string>, id)
          for (const c of turn.calls) assert.isTrue(seenTools.has(c.tool), `call of ${c.tool}, which the context has not seen`)
          if (turn.plan !== undefined) {
            assert.strictEqual(PlanDag.validate(turn.plan)._tag, "Valid")
            if (turn.calls.length > 0) {
              // the turn's calls come last, each declaring the calls its $refs read; the nodes before are earlier calls
              const nodes = turn.plan.nodes
              assert.deepStrictEqual(nodes.slice(nodes.length - turn.calls.length).map((n) => n.id), turn.calls.map((c) => c.id))
              for (const [i, c] of turn.calls.entries()) {
                const reads = [...new Set(Refs.collectRefs(c.arguments).flatMap((site) => (site._tag === "Ref" ? [site.target.call as string] : [])))]
                assert.sameMembers([...nodes[nodes.length - turn.calls.length + i]!.deps], reads)
              }
              for (const n of nodes.slice(0, nodes.length - turn.calls.length)) assert.include(used as ReadonlyArray<string>, n.id)
            }
          }
        }
      }
      assert.sameMembers([...kindsSeen], ["search", "call", "answer"])
      assert.isAbove(turns, 150)
    }))
})

describe("the learned policy's context", () => {
  it.effect("never holds the task: the rollout passes none and the space is blind to the gold", () =>
    Effect.gen(function*() {
      const d = yield* data
      const steps = d.learned.reduce((n, t) => n + t.steps.length, 0)
      assert.strictEqual(d.learnedContexts.length, steps)
      for (const context of d.learnedContexts) assert.isFalse("task" in context)
      // the capture works: the privileged teacher is given the task
      assert.isTrue(d.teacherContexts.length > 0 && d.teacherContexts.every((c) => c.task !== undefined))

      const bySeed = new Map(d.learned.map((t, i) => [t.seed, { trajectory: t, task: d.tasks[i] as Task }]))
      for (const context of d.learnedContexts) {
        const { trajectory, task } = bySeed.get(context.seed)!
        const step = trajectory.steps[context.round] as Step
        const space = ActionSpace.build(context)
        assert.strictEqual(ActionSpace.digest(space), step.decision?.digest)
        // the same context with the task attached, real or with its gold replaced, builds the same space
        const altered: Task = { ...task, gold: [], facts: [{ key: "answer", value: "nothing at all", call: task.gold[0]!.id, path: "x" }] }
        const withTask: PolicyContext = { ...context, task }
        const withAltered: PolicyContext = { ...context, task: altered }
        assert.strictEqual(ActionSpace.digest(ActionSpace.build(withTask)), ActionSpace.digest(space))
        assert.strictEqual(ActionSpace.digest(ActionSpace.build(withAltered)), ActionSpace.digest(space))
      }

      // end to end: the same rollouts on tasks whose gold is altered take the same turns
      const altered = d.tasks.map((t): Task => ({ ...t, gold: t.gold.slice(0, 1).map((g) => ({ ...g, arguments: {} })), facts: [] }))
      const again = yield* rollouts(altered, learnedSeed).pipe(Effect.provide(appLayer(learnedCapturing([]))))
      assert.deepStrictEqual(again.map((t) => t.steps.map((s) => [s.raw, s.decision])), d.learned.map((t) => t.steps.map((s) => [s.raw, s.decision])))
    }))
})

describe("call candidates", () => {
  it.effect("include distractors (tools outside the gold DAG) and distinct fillings of one tool", () =>
    Effect.gen(function*() {
      const d = yield* data
      let rounds = 0
      let withDistractor = 0
      let withGold = 0
      let multiFilled = 0
      for (const { context, task } of [...stepsOf(d, "learned"), ...stepsOf(d, "teacher")]) {
        const space = ActionSpace.build(context)
        if (space.calls.length === 0) continue
        rounds++
        const gold = new Set(task.gold.map((g) => g.tool as string))
        if (space.calls.some((c) => !gold.has(c.tool.name))) withDistractor++
        if (space.calls.some((c) => gold.has(c.tool.name))) withGold++
        const byTool = new Map<string, Array<string>>()
        for (const c of space.calls) byTool.set(c.tool.name, [...(byTool.get(c.tool.name) ?? []), callKey(c.tool.name, c.arguments)])
        for (const [tool, keys] of byTool) {
          if (keys.length < 2) continue
          multiFilled++
          assert.strictEqual(new Set(keys).size, keys.length, `round ${context.round}: ${tool} has two equal fillings`)
        }
        // every candidate is a tool of the context
        const seen = new Set(context.tools.map((t) => t.name as string))
        assert.isTrue(space.calls.every((c) => seen.has(c.tool.name)))
      }
      assert.isAtLeast(rounds, 5)
      assert.isAtLeast(withDistractor, 3)
      assert.isAtLeast(withGold, 3)
      assert.isAtLeast(multiFilled, 3)
    }))
})

describe("ActionSpace.project", () => {
  it("credits an answer with the facts whose values it states as whole words or numbers", () => {
    const values = ["1", "3", "11.2", "2024-04-13", "Parcel 6822", "GH"]
    const space: ActionSpace.Space = {
      layout: { kinds: [{ row: 0, start: 1, end: 1 + values.length, mode: "subset", plan: false }], rows: 1 + values.length },
      features: new Float64Array((1 + values.length) * ActionSpace.width),
      kinds: ["answer"],
      searches: [],
      calls: [],
      facts: values.map((value, i) => ({ callId: callId("c1"), path: ["items", i], label: "items", value })),
      usedCallIds: [callId("c1")],
      priorCalls: [],
      request: "",
      clauses: ["x"]
    }
    assert.isUndefined(TurnDistribution.validate(space.layout))
    const chosen = (answer: string) => {
      const p = ActionSpace.project(space, { searches: [], calls: [], answer })
      return p.choice?.selected.map((r) => values[r - 1])
    }
    // "1" is not stated by 11.2, nor "3" by 2024-04-13, nor "GH" inside a word
    assert.deepStrictEqual(chosen("The wind was 11.2 km/h on 2024-04-13 (Ghana)."), ["11.2", "2024-04-13"])
    // a part reads "label: values" and only its values count: the label "The top 3" repeats the request
    assert.deepStrictEqual(chosen("The top 3: parcel 6822, and 1 more from GH."), ["1", "Parcel 6822", "GH"])
    assert.deepStrictEqual(chosen("The top 3 parcel 6822"), ["3", "Parcel 6822"])
    assert.isUndefined(chosen("Nothing matched."))
  })

  it("resolves a value several facts share by the key its label names, and a yes/no value only under its key", () => {
    const facts = [
      { path: ["result", "home_score"], value: "4" },
      { path: ["result", "away_score"], value: "4" },
      { path: ["result", "home_team"], value: "Wilville Stallions" },
      { path: ["result", "valid_format"], value: "true" },
      { path: ["result", "mx_found"], value: "true" },
      { path: ["result", "rank"], value: "7" },
      { path: ["result", "total"], value: "7" }
    ]
    const space: ActionSpace.Space = {
      layout: { kinds: [{ row: 0, start: 1, end: 1 + facts.length, mode: "subset", plan: false }], rows: 1 + facts.length },
      features: new Float64Array((1 + facts.length) * ActionSpace.width),
      kinds: ["answer"],
      searches: [],
      calls: [],
      facts: facts.map((f) => ({ callId: callId("c1"), path: f.path, label: f.path.join(" "), value: f.value })),
      usedCallIds: [callId("c1")],
      priorCalls: [],
      request: "",
      clauses: ["x"]
    }
    const chosen = (answer: string) =>
      ActionSpace.project(space, { searches: [], calls: [], answer }).choice?.selected.map((r) => (facts[r - 1] as { path: Array<string> }).path[1])
    // the home score, not the away score of the same value, nor the team the label quotes
    assert.deepStrictEqual(chosen(`Here is what the tools returned. home score of the match "Wilville Stallions vs Fort Sumfield Bulls": 4.`), ["home_score"])
    // a label naming neither key keeps every fact of the value
    assert.deepStrictEqual(chosen("the number: 7"), ["rank", "total"])
    // "true" under "valid format" is that key's, not every fact that is true
    assert.deepStrictEqual(chosen("valid format (email validation): true; score: 4"), ["home_score", "away_score", "valid_format"])
  })

  it.effect("expresses the teacher's turns: whole + partly + none = steps, and a whole projection replays the turn", () =>
    Effect.gen(function*() {
      const d = yield* data
      const steps = stepsOf(d, "teacher")
      const counts = { whole: 0, partly: 0, none: 0 }
      const byKind: Record<string, { whole: number; partly: number; none: number }> = {}
      let dropped = 0
      let actions = 0
      const answerFacts = { chosen: 0, gold: 0 }
      for (const { context, step, task } of steps) {
        const space = ActionSpace.build(context)
        const turn = step.turn
        const kind = turn === undefined ? "malformed" : turn.answer !== undefined ? "answer" : turn.searches.length > 0 ? "search" : "call"
        const tally = (byKind[kind] ??= { whole: 0, partly: 0, none: 0 })
        if (turn === undefined) {
          counts.none++
          tally.none++
          continue
        }
        const projection = ActionSpace.project(space, turn)
        assert.strictEqual(projection.actions, turn.answer !== undefined ? 1 : turn.searches.length + turn.calls.length)
        assert.isAtMost(projection.dropped.length, projection.actions)
        dropped += projection.dropped.length
        actions += projection.actions
        const share = projection.choice === undefined ? "none" : projection.dropped.length === 0 ? "whole" : "partly"
        counts[share]++
        tally[share]++
        if (projection.choice === undefined) continue
        if (turn.answer !== undefined) {
          const slot = space.layout.kinds[projection.choice.kind]!
          const gold = new Set(task.facts.map((f) => f.value))
          const values = projection.choice.selected.map((r) => space.facts[r - slot.start]!.value)
          answerFacts.chosen += values.length
          answerFacts.gold += values.filter((v) => gold.has(v)).length
        }
        // the choice is one the distribution can draw, and its turn is the teacher's as far as the space goes
        assert.isTrue(Number.isFinite(TurnDistribution.logProb(space.layout, new Float64Array(space.layout.rows), projection.choice)))
        const replay = ActionSpace.toTurn(space, projection.choice)
        assert.strictEqual(replay.plan !== undefined, turn.plan !== undefined && space.layout.kinds[projection.choice.kind]!.plan)
        if (share === "whole") {
          assert.strictEqual(actionCount(replay), actionCount(turn))
          // the replay leaves out the optional arguments the request does not determine (a page size), and only those
          const undetermined = (c: { readonly tool: string; readonly arguments: Record<string, unknown> }) => {
            const spec = context.tools.find((t) => t.name === c.tool)
            return Object.fromEntries(Object.entries(c.arguments).filter(([k, v]) => spec === undefined || spec.parameters.required.includes(k) || (typeof v === "object" && v !== null) || task.request.includes(String(v))))
          }
          assert.sameMembers(replay.calls.map((c) => callKey(c.tool, c.arguments)), turn.calls.map((c) => callKey(c.tool, undetermined(c))))
        }
      }
      assert.strictEqual(counts.whole + counts.partly + counts.none, steps.length)
      assert.isAbove(counts.whole, 0)
      const pct = (n: number, of: number) => `${(100 * n / Math.max(1, of)).toFixed(1)}%`
      console.log(
        `teacher expressibility on ${d.tasks.length} held-out tasks (${steps.length} steps): whole ${counts.whole} (${pct(counts.whole, steps.length)}), ` +
          `partly ${counts.partly} (${pct(counts.partly, steps.length)}), none ${counts.none} (${pct(counts.none, steps.length)}); ` +
          `actions dropped ${dropped} of ${actions} (${pct(dropped, actions)}); answer facts credited ${answerFacts.chosen}, ` +
          `${answerFacts.gold} of them gold values`
      )
      for (const [kind, t] of Object.entries(byKind)) {
        console.log(`  ${kind}: whole ${t.whole}, partly ${t.partly}, none ${t.none}`)
      }
    }))
})

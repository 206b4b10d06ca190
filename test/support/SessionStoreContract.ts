/**
 * The SessionStore contract as one reusable test suite: `sessionStoreContract(subject)` registers the same tests for
 * any implementation (memory, SQLite, and any later one — a Postgres store calls it with its own `newLog`). The
 * contract itself is stated in src/service/SessionStore.ts; each test below names the clause it holds.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import type { CallId, TaskId, ToolName } from "../../src/domain/Ids.ts"
import type { Task } from "../../src/domain/Task.ts"
import { SessionStore } from "../../src/service/SessionStore.ts"
import type { SessionSpec, SessionStoreError, StoredTurn } from "../../src/service/SessionStore.ts"

/** A store under test. */
export interface StoreUnderTest {
  readonly name: string
  /**
   * A new, empty log. `open()` gives one handle on it, as a replica opens it: for a shared store (`shared: true`) two
   * handles see each other's writes; a store held by one process (memory) is opened once per test.
   */
  readonly newLog: () => {
    readonly open: () => Layer.Layer<SessionStore, SessionStoreError>
    readonly dispose: () => void
  }
  readonly shared: boolean
}

const task = (id: string, request = "Find the weather in Paris, then convert 20 EUR to USD."): Task => ({
  id: id as TaskId,
  request,
  level: "I2",
  categories: ["Weather", "Finance"],
  gold: [
    { id: "c1" as CallId, tool: "weather_now" as ToolName, arguments: { city: "Paris", units: ["c", "f"] }, deps: [] },
    { id: "c2" as CallId, tool: "fx_convert" as ToolName, arguments: { amount: 20, from: "EUR", to: { $ref: "c1.currency" } }, deps: ["c1" as CallId] }
  ],
  facts: [{ key: "temperature", value: "21 °C", call: "c1" as CallId, path: "temp" }],
  split: "test",
  seed: 7,
  source: "posted"
})

const spec = (taskId = "t-1"): SessionSpec => ({
  task: task(taskId),
  paradigm: "ParaAct",
  seed: 3,
  policy: "remote",
  maxRounds: 12,
  topK: 5,
  faults: true,
  faultRate: 0.05
})

/** Turns with every field a stored turn can have: text only, a structured turn, logprob, unicode and JSON in text. */
const turnAt = (i: number): StoredTurn =>
  i % 3 === 0
    ? { text: `<search>[{"slot":"s${i}","query":"météo — ${i}"}]</search>`, usage: { promptTokens: 100 + i, completionTokens: 20 } }
    : i % 3 === 1
    ? {
      text: "",
      turn: { think: "call both \u{1F600}", searches: [], calls: [{ id: `c${i}` as CallId, tool: "weather_now" as ToolName, arguments: { city: "Paris", n: [1, 2.5, null, { deep: true }] } }] },
      usage: { promptTokens: 0, completionTokens: 0 },
      logprob: -1.25
    }
    : { text: "<answer>21 °C</answer>", turn: { searches: [], calls: [], answer: "21 °C" }, usage: { promptTokens: 7, completionTokens: 3 } }

const ownerA = "a".repeat(64)
const ownerB = "b".repeat(64)

/** Registers the contract tests for `subject`. */
export const sessionStoreContract = (subject: StoreUnderTest): void => {
  /** Runs `f` with `handles` handles on one new log. */
  const withLog = <A, E>(handles: 1 | 2, f: (stores: ReadonlyArray<SessionStore["Service"]>) => Effect.Effect<A, E>) =>
    Effect.scoped(Effect.gen(function*() {
      const log = subject.newLog()
      yield* Effect.addFinalizer(() => Effect.sync(log.dispose))
      const stores: Array<SessionStore["Service"]> = []
      for (let i = 0; i < handles; i++) stores.push(Context.get(yield* Layer.build(log.open()), SessionStore))
      return yield* f(stores)
    }))
  const one = <A, E>(f: (store: SessionStore["Service"]) => Effect.Effect<A, E>) => withLog(1, (s) => f(s[0]!))

  describe(`SessionStore contract: ${subject.name}`, () => {
    it.effect("create → get and head give the session back, owner and spec intact, with a new incarnation and no turns", () =>
      one((store) =>
        Effect.gen(function*() {
          const made = yield* store.create({ id: "s1", world: "generated:seed=7:size=2000", owner: ownerA, spec: spec() })
          assert.isDefined(made)
          assert.isString(made!.incarnation)
          const got = yield* store.get("s1")
          assert.deepStrictEqual(got, { id: "s1", world: "generated:seed=7:size=2000", owner: ownerA, spec: spec(), incarnation: made!.incarnation })
          assert.deepStrictEqual(yield* store.head("s1"), { incarnation: made!.incarnation, turns: 0 })
          assert.deepStrictEqual(yield* store.turns("s1", made!.incarnation, 0), [])
          assert.isUndefined(yield* store.get("nope"))
          assert.isUndefined(yield* store.head("nope"))
        })))

    it.effect("create of an id that is open is refused (undefined) and leaves the open session as it was", () =>
      one((store) =>
        Effect.gen(function*() {
          const first = yield* store.create({ id: "s1", world: "w", owner: ownerA, spec: spec() })
          yield* store.append("s1", first!.incarnation, 0, turnAt(0))
          assert.isUndefined(yield* store.create({ id: "s1", world: "w2", owner: ownerB, spec: spec("t-2") }))
          const got = yield* store.get("s1")
          assert.deepStrictEqual([got?.owner, got?.world, got?.incarnation], [ownerA, "w", first!.incarnation])
          assert.deepStrictEqual(yield* store.head("s1"), { incarnation: first!.incarnation, turns: 1 })
        })))

    it.effect("append takes rounds in order only: a round already taken or ahead of the log is a conflict; turns read back exactly", () =>
      one((store) =>
        Effect.gen(function*() {
          const { incarnation } = (yield* store.create({ id: "s1", world: "w", owner: ownerA, spec: spec() }))!
          for (let i = 0; i < 6; i++) assert.strictEqual(yield* store.append("s1", incarnation, i, turnAt(i)), "appended")
          assert.strictEqual(yield* store.append("s1", incarnation, 5, turnAt(9)), "conflict")
          assert.strictEqual(yield* store.append("s1", incarnation, 0, turnAt(9)), "conflict")
          assert.strictEqual(yield* store.append("s1", incarnation, 8, turnAt(9)), "conflict")
          assert.deepStrictEqual(yield* store.head("s1"), { incarnation, turns: 6 })
          assert.deepStrictEqual(yield* store.turns("s1", incarnation, 0), Array.from({ length: 6 }, (_, i) => turnAt(i)))
          assert.deepStrictEqual(yield* store.turns("s1", incarnation, 4), [turnAt(4), turnAt(5)])
          assert.deepStrictEqual(yield* store.turns("s1", incarnation, 6), [])
        })))

    it.effect("many appends at once, on two handles (a store may send them together): each gets its own compare-and-set — one winner per round, conflicts, gone — and the log holds exactly the winners", () =>
      withLog(subject.shared ? 2 : 1, (stores) =>
        Effect.gen(function*() {
          const [a, b] = [stores[0], stores[stores.length - 1]]
          const ids = Array.from({ length: 40 }, (_, i) => `m${i}`)
          const made = yield* Effect.forEach(ids, (id) => Effect.map(a!.create({ id, world: "w", owner: ownerA, spec: spec() }), (s) => s!.incarnation))
          const first = yield* Effect.forEach(ids, (id, i) => a!.append(id, made[i]!, 0, turnAt(0)), { concurrency: "unbounded" })
          assert.deepStrictEqual(first, ids.map(() => "appended"))
          for (const i of [20, 21, 22, 23, 24, 25, 26, 27, 28, 29]) assert.isTrue(yield* b!.close(ids[i]!, made[i]!))
          // m0–m9: round 1 sent to both handles (one wins); m10–m19: round 0 again (taken); m20–m29: closed; m30–m39:
          // another incarnation
          const outcomes = yield* Effect.forEach(ids, (id, i) =>
            i < 10
              ? Effect.all([a!.append(id, made[i]!, 1, turnAt(1)), b!.append(id, made[i]!, 1, turnAt(2))], { concurrency: "unbounded" })
              : i < 20
              ? Effect.map(a!.append(id, made[i]!, 0, turnAt(3)), (o) => [o])
              : Effect.map(a!.append(id, i < 30 ? made[i]! : `${made[i]!}-other`, 1, turnAt(4)), (o) => [o]), { concurrency: "unbounded" })
          for (let i = 0; i < 10; i++) assert.deepStrictEqual([...outcomes[i]!].sort(), ["appended", "conflict"], ids[i])
          for (let i = 10; i < 20; i++) assert.deepStrictEqual(outcomes[i], ["conflict"], ids[i])
          for (let i = 20; i < 40; i++) assert.deepStrictEqual(outcomes[i], ["gone"], ids[i])
          for (let i = 0; i < 40; i++) {
            const head = yield* b!.head(ids[i]!)
            if (i >= 20 && i < 30) {
              assert.isUndefined(head, ids[i])
              continue
            }
            const turns = yield* b!.turns(ids[i]!, made[i]!, 0)
            assert.strictEqual(head?.turns, turns.length, ids[i])
            if (i < 10) {
              assert.strictEqual(turns.length, 2, ids[i])
              assert.deepStrictEqual(turns[1], outcomes[i]![0] === "appended" ? turnAt(1) : turnAt(2), ids[i])
            } else assert.deepStrictEqual(turns, [turnAt(0)], ids[i])
          }
        })))

    it.effect("the store refuses an append for an unknown session or another incarnation (gone), whatever the index", () =>
      one((store) =>
        Effect.gen(function*() {
          assert.strictEqual(yield* store.append("never-created", "x", 0, turnAt(0)), "gone")
          const { incarnation } = (yield* store.create({ id: "s1", world: "w", owner: ownerA, spec: spec() }))!
          assert.strictEqual(yield* store.append("s1", `${incarnation}-other`, 0, turnAt(0)), "gone")
          assert.strictEqual((yield* store.head("s1"))?.turns, 0)
          // nothing was stored for the unknown id either: creating it now starts empty
          const later = yield* store.create({ id: "never-created", world: "w", owner: ownerA, spec: spec() })
          assert.deepStrictEqual(yield* store.turns("never-created", later!.incarnation, 0), [])
        })))

    it.effect("close ends the session: head/get/turns answer nothing, an append is gone, a second close is false", () =>
      one((store) =>
        Effect.gen(function*() {
          const { incarnation } = (yield* store.create({ id: "s1", world: "w", owner: ownerA, spec: spec() }))!
          for (let i = 0; i < 3; i++) yield* store.append("s1", incarnation, i, turnAt(i))
          assert.isFalse(yield* store.close("s1", `${incarnation}-other`))
          assert.isDefined(yield* store.head("s1"))
          assert.isTrue(yield* store.close("s1", incarnation))
          assert.isUndefined(yield* store.head("s1"))
          assert.isUndefined(yield* store.get("s1"))
          assert.deepStrictEqual(yield* store.turns("s1", incarnation, 0), [])
          assert.strictEqual(yield* store.append("s1", incarnation, 3, turnAt(3)), "gone")
          assert.strictEqual(yield* store.append("s1", incarnation, 0, turnAt(0)), "gone")
          assert.isFalse(yield* store.close("s1", incarnation))
          assert.isFalse(yield* store.close("never-created", "x"))
        })))

    it.effect("an id is never reused with old turns: created again after close it is a new incarnation with 0 turns", () =>
      one((store) =>
        Effect.gen(function*() {
          const old = (yield* store.create({ id: "s1", world: "w", owner: ownerA, spec: spec() }))!
          for (let i = 0; i < 4; i++) yield* store.append("s1", old.incarnation, i, turnAt(i))
          yield* store.close("s1", old.incarnation)
          const again = (yield* store.create({ id: "s1", world: "w", owner: ownerB, spec: spec("t-2") }))!
          assert.notStrictEqual(again.incarnation, old.incarnation)
          assert.deepStrictEqual(yield* store.head("s1"), { incarnation: again.incarnation, turns: 0 })
          assert.deepStrictEqual(yield* store.turns("s1", again.incarnation, 0), [])
          assert.deepStrictEqual(yield* store.turns("s1", old.incarnation, 0), [])
          assert.strictEqual((yield* store.get("s1"))?.owner, ownerB)
          // the old incarnation's next round is refused, the new one's first is taken
          assert.strictEqual(yield* store.append("s1", old.incarnation, 4, turnAt(4)), "gone")
          assert.strictEqual(yield* store.append("s1", old.incarnation, 0, turnAt(0)), "gone")
          assert.strictEqual(yield* store.append("s1", again.incarnation, 0, turnAt(7)), "appended")
          assert.deepStrictEqual(yield* store.turns("s1", again.incarnation, 0), [turnAt(7)])
        })))

    it.effect("concurrent appends of one round: exactly one is appended, the others are conflicts", () =>
      one((store) =>
        Effect.gen(function*() {
          const { incarnation } = (yield* store.create({ id: "s1", world: "w", owner: ownerA, spec: spec() }))!
          const outcomes = yield* Effect.all(Array.from({ length: 16 }, (_, i) => store.append("s1", incarnation, 0, turnAt(i))), { concurrency: "unbounded" })
          assert.strictEqual(outcomes.filter((o) => o === "appended").length, 1)
          assert.strictEqual(outcomes.filter((o) => o === "conflict").length, 15)
          assert.strictEqual((yield* store.turns("s1", incarnation, 0)).length, 1)
        })))

    it.effect("posted tasks: stored for their owner, read back exactly; another owner cannot overwrite one; the owner can", () =>
      one((store) =>
        Effect.gen(function*() {
          assert.isTrue(yield* store.putTask(task("posted-1"), ownerA))
          assert.deepStrictEqual(yield* store.getTask("posted-1"), task("posted-1"))
          assert.isFalse(yield* store.putTask(task("posted-1", "overwritten by B"), ownerB))
          assert.deepStrictEqual(yield* store.getTask("posted-1"), task("posted-1"))
          assert.isTrue(yield* store.putTask(task("posted-1", "revised by A"), ownerA))
          assert.strictEqual((yield* store.getTask("posted-1"))?.request, "revised by A")
          assert.isUndefined(yield* store.getTask("posted-2"))
        })))

    it.effect("expire never drops a session touched within the idle time, and never brings a closed one back", () =>
      one((store) =>
        Effect.gen(function*() {
          const closed = (yield* store.create({ id: "closed", world: "w", owner: ownerA, spec: spec() }))!
          yield* store.append("closed", closed.incarnation, 0, turnAt(0))
          yield* store.close("closed", closed.incarnation)
          yield* TestClock.adjust("5 minutes")
          const live = (yield* store.create({ id: "live", world: "w", owner: ownerA, spec: spec() }))!
          yield* store.append("live", live.incarnation, 0, turnAt(0))
          yield* TestClock.adjust("1 minute")
          yield* store.expire(2 * 60_000)
          assert.deepStrictEqual(yield* store.head("live"), { incarnation: live.incarnation, turns: 1 })
          assert.isUndefined(yield* store.head("closed"))
          assert.strictEqual(yield* store.append("closed", closed.incarnation, 1, turnAt(1)), "gone")
          const again = (yield* store.create({ id: "closed", world: "w", owner: ownerA, spec: spec() }))!
          assert.deepStrictEqual(yield* store.turns("closed", again.incarnation, 0), [])
        })))

    if (subject.shared) {
      it.effect("two replicas on one log: a close on one is honoured by the other's next head and append; the id reopens empty", () =>
        withLog(2, ([a, b]) =>
          Effect.gen(function*() {
            const made = (yield* a!.create({ id: "s1", world: "w", owner: ownerA, spec: spec() }))!
            assert.strictEqual(yield* a!.append("s1", made.incarnation, 0, turnAt(0)), "appended")
            assert.deepStrictEqual(yield* b!.head("s1"), { incarnation: made.incarnation, turns: 1 })
            assert.strictEqual(yield* b!.append("s1", made.incarnation, 1, turnAt(1)), "appended")
            assert.deepStrictEqual(yield* a!.turns("s1", made.incarnation, 0), [turnAt(0), turnAt(1)])
            // the same round on both: one winner
            const race = yield* Effect.all([a!.append("s1", made.incarnation, 2, turnAt(2)), b!.append("s1", made.incarnation, 2, turnAt(5))], { concurrency: 2 })
            assert.deepStrictEqual([...race].sort(), ["appended", "conflict"])
            // closed on B: A sees it at once and cannot append
            assert.isTrue(yield* b!.close("s1", made.incarnation))
            assert.isUndefined(yield* a!.head("s1"))
            assert.isUndefined(yield* a!.get("s1"))
            assert.strictEqual(yield* a!.append("s1", made.incarnation, 3, turnAt(3)), "gone")
            // an id open on A cannot be created on B
            assert.isDefined(yield* a!.create({ id: "s2", world: "w", owner: ownerA, spec: spec() }))
            assert.isUndefined(yield* b!.create({ id: "s2", world: "w", owner: ownerB, spec: spec() }))
            // reopened on A: B sees the new incarnation with no turns
            const again = (yield* a!.create({ id: "s1", world: "w", owner: ownerB, spec: spec() }))!
            assert.deepStrictEqual(yield* b!.head("s1"), { incarnation: again.incarnation, turns: 0 })
            assert.deepStrictEqual(yield* b!.turns("s1", again.incarnation, 0), [])
            assert.strictEqual((yield* b!.get("s1"))?.owner, ownerB)
            // a task posted through one replica is held for its owner on the other
            assert.isTrue(yield* a!.putTask(task("posted-1"), ownerA))
            assert.isFalse(yield* b!.putTask(task("posted-1", "B's"), ownerB))
            assert.strictEqual((yield* b!.getTask("posted-1"))?.request, task("posted-1").request)
          })))
    }
  })
}

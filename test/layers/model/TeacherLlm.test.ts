import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Logger, Redacted, Result } from "effect"
import { callId, taskId, toolName } from "../../../src/domain/Ids.ts"
import type { Plan } from "../../../src/domain/Plan.ts"
import type { Task } from "../../../src/domain/Task.ts"
import type { Paradigm, Trajectory } from "../../../src/domain/Trajectory.ts"
import type { PolicyContext } from "../../../src/agent/Policy.ts"
import * as Rollout from "../../../src/runtime/Rollout.ts"
import * as Teacher from "../../../src/agent/Teacher.ts"
import type { RoleName } from "../../../src/agent/Teacher.ts"
import * as OpenAiClient from "../../../layers/model/OpenAiClient.ts"
import * as TeacherLlm from "../../../layers/model/TeacherLlm.ts"
import { libraryLayer, makeLog, retrieverLayer, simulatorLayer, tool } from "../../support/RolloutKit.ts"
import { type LoopbackServer, LoopbackServer as Loopback, type RecordedRequest, Reply, type Responder } from "../../support/LoopbackServer.ts"
import { makeLibrary } from "../../../src/toolenv/ToolLibrary.ts"
import * as DepGraph from "../../../src/toolenv/DepGraph.ts"
import { rng } from "../../../src/math/Random.ts"
import { Policy } from "../../../src/agent/Policy.ts"

/** The LLM teacher's four roles as separate chat calls, against a real HTTP server on loopback with scripted replies. */
const names = ["alpha", "bravo", "charlie"]
const SECRET = "sk-teacher-secret-77"

const task: Task = {
  id: taskId("roster"),
  request: "Find the team, its roster, and the weather in the team's city.",
  level: "I2",
  categories: ["Testing"],
  gold: [
    { id: callId("c1"), tool: toolName("alpha"), arguments: { q: "lakers" }, deps: [] },
    { id: callId("c2"), tool: toolName("bravo"), arguments: { q: { $ref: "c1.echo.q" } }, deps: [callId("c1")] },
    { id: callId("c3"), tool: toolName("charlie"), arguments: { q: "paris" }, deps: [] }
  ],
  facts: [
    { key: "team", value: "lakers", call: callId("c1"), path: "echo.q" },
    { key: "roster", value: "lakers", call: callId("c2"), path: "echo.q" },
    { key: "city", value: "paris", call: callId("c3"), path: "echo.q" }
  ],
  split: "train",
  seed: 1,
  source: "test"
}

const completion = (content: string, prompt = 100, completionTokens = 10) => ({
  model: "teacher-model",
  choices: [{ message: { role: "assistant", content }, finish_reason: "stop" }],
  usage: { prompt_tokens: prompt, completion_tokens: completionTokens }
})

const json = (value: unknown, prompt = 100, completionTokens = 10): Reply => Reply.json(completion(JSON.stringify(value), prompt, completionTokens))

interface Body {
  readonly model: string
  readonly temperature: number
  readonly max_tokens: number
  readonly seed?: number
  readonly messages: ReadonlyArray<{ readonly role: string; readonly content: string }>
}

const bodyOf = (r: RecordedRequest): Body => r.body as Body

/** Which role a request is for, from its system prompt. */
const roleOf = (r: { readonly body: unknown }): RoleName | undefined => {
  const system = (r.body as Body | undefined)?.messages[0]?.content
  return Teacher.roleNames.find((role) => system === TeacherLlm.systemPrompts[role])
}

/** A server that answers each role's requests with that role's replies, in order. */
const roleServer = (replies: Partial<Record<RoleName, ReadonlyArray<Responder>>>) =>
  Loopback.make({
    routes: Teacher.roleNames.flatMap((role) =>
      (replies[role] ?? []).map((reply) => ({ match: (r: { readonly body: unknown }) => roleOf(r) === role, reply, times: 1 }))
    ),
    fallback: (r) => Reply.status(500, { message: `no scripted reply for ${roleOf(r) ?? "an unknown role"} request ${r.index}` })
  })

const clientFor = (server: LoopbackServer) =>
  OpenAiClient.layerFrom({ baseUrl: `${server.url}/v1`, model: "teacher-model", apiKey: SECRET, maxRetries: 0 })

/** A rollout of the task with the LLM teacher; returns the trajectory, the teacher's counters and what the server saw. */
const rolloutWith = (server: LoopbackServer, options: TeacherLlm.TeacherLlmOptions = {}, paradigm: Paradigm = "ParaAct") =>
  Effect.gen(function*() {
    const log = yield* makeLog()
    const teacher = TeacherLlm.layer(options).pipe(Layer.provide(Layer.mergeAll(clientFor(server), libraryLayer(names))))
    const layer = Layer.mergeAll(
      Rollout.layer({ faults: false }).pipe(
        Layer.provide(Layer.mergeAll(teacher, libraryLayer(names), retrieverLayer(names), simulatorLayer({}, log)))
      ),
      teacher
    )
    return yield* Effect.gen(function*() {
      const rollout = yield* Rollout.Rollout
      const trajectory = yield* rollout.run(task, { paradigm, seed: 5 })
      const stats = yield* (yield* TeacherLlm.TeacherLlmStats).snapshot
      const requests = yield* server.requests
      return { trajectory, stats, requests }
    }).pipe(Effect.provide(layer))
  })

const actions = (t: Trajectory): ReadonlyArray<string> =>
  t.steps.map((s) => {
    const turn = s.turn
    if (turn === undefined) return "malformed"
    if (turn.answer !== undefined) return "answer"
    if (turn.searches.length > 0) return `search ${turn.searches.map((q) => q.slot).join(",")}`
    return `call ${turn.calls.map((c) => c.id).join(",")}`
  })

const plannedNodes = [
  { id: "c1", slot: "find a team by name", tool: "alpha", deps: [] },
  { id: "c2", slot: "list a team's roster", tool: "bravo", deps: ["c1"] },
  { id: "c3", slot: "weather in a city", tool: "charlie", deps: [] }
]

const goodSearch = {
  reason: "One query per slot.",
  queries: [{ slot: "c1", query: "alpha team search" }, { slot: "c2", query: "bravo roster" }, { slot: "c3", query: "charlie weather" }]
}

const userOf = (r: RecordedRequest | undefined): string => (r === undefined ? "" : bodyOf(r).messages[1]?.content ?? "")

describe("the LLM teacher in a rollout", () => {
  it.live("ParaAct: planner, searcher, executor and answerer replies become the expected turns; usage is summed per round", () =>
    Effect.gen(function*() {
      const server = yield* roleServer({
        plan: [json({ reason: "c2 needs the team from c1; c3 is independent.", nodes: plannedNodes }, 200, 40)],
        search: [json(goodSearch, 150, 30)],
        execute: [
          json({ reason: "c1 and c3 are independent.", calls: [{ node: "c1", arguments: { q: "lakers" } }, { node: "c3", arguments: { q: "paris" } }] }, 300, 20),
          json({ calls: [{ node: "c2", arguments: { q: { $ref: "c1.echo.q" } } }] }, 320, 15)
        ],
        answer: [json({ answer: "The team is lakers; its roster lookup returned lakers; the city is paris." }, 400, 25)]
      })
      const { trajectory: t, stats, requests } = yield* rolloutWith(server)
      assert.strictEqual(t.stop, "answer")
      assert.strictEqual(t.policy, "teacher-llm:teacher-model")
      assert.deepStrictEqual(actions(t), ["search c1,c2,c3", "call c1,c3", "call c2", "answer"])
      assert.deepStrictEqual(requests.map(roleOf), ["plan", "search", "execute", "execute", "answer"])
      const [explore, first, second, last] = t.steps
      assert.deepStrictEqual(explore?.turn?.plan, {
        nodes: plannedNodes.map((n) => ({ id: callId(n.id), tool: toolName(n.tool), slot: n.slot, deps: n.deps.map(callId) }))
      })
      assert.strictEqual(explore?.turn?.think, "c2 needs the team from c1; c3 is independent. One query per slot.")
      assert.deepStrictEqual(explore?.turn?.searches.map((s) => s.query), ["alpha team search", "bravo roster", "charlie weather"])
      assert.deepStrictEqual(first?.observations.map((o) => [o.callId, o.tool, o.outcome._tag]), [["c1", "alpha", "ok"], ["c3", "charlie", "ok"]])
      assert.deepStrictEqual(second?.observations[0]?.arguments, { q: "lakers" })
      assert.strictEqual(second?.turn?.think, "Running 1 independent call(s).")
      assert.strictEqual(last?.turn?.answer, "The team is lakers; its roster lookup returned lakers; the city is paris.")
      // each round's usage is the sum of its role calls
      assert.deepStrictEqual(t.steps.map((s) => s.usage), [
        { promptTokens: 350, completionTokens: 70 },
        { promptTokens: 300, completionTokens: 20 },
        { promptTokens: 320, completionTokens: 15 },
        { promptTokens: 400, completionTokens: 25 }
      ])
      assert.deepStrictEqual(stats.roles.execute, { calls: 2, repairs: 0, fallbacks: 0, promptTokens: 620, completionTokens: 35 })
      assert.strictEqual(stats.turns, 4)
      // the endpoint config of the LLM policy: the client's model, temperature 0.7, 2048 tokens, a per-call seed
      for (const r of requests) {
        const body = bodyOf(r)
        assert.strictEqual(body.model, "teacher-model")
        assert.strictEqual(body.temperature, 0.7)
        assert.strictEqual(body.max_tokens, 2048)
        assert.isNumber(body.seed)
        assert.strictEqual(r.headers["authorization"], `Bearer ${SECRET}`)
      }
      assert.strictEqual(new Set(requests.map((r) => bodyOf(r).seed)).size, requests.length)
      // default hints: the planner and the searcher see the gold tools, the executor and the answerer do not
      const [plannerRequest, searcherRequest, , secondExecute, answerRequest] = requests
      assert.include(userOf(plannerRequest), "## Hint (privileged): tools that serve this request")
      assert.include(userOf(plannerRequest), "- bravo: The bravo tool.")
      assert.include(userOf(plannerRequest), "The answer must state: team, roster, city.")
      assert.include(userOf(searcherRequest), "- c2: list a team's roster; planned tool: bravo")
      assert.include(userOf(searcherRequest), "what the tools that serve this request do (not found yet)\n- The alpha tool.")
      assert.notInclude(userOf(secondExecute), "Hint")
      assert.include(userOf(secondExecute), "### c2: list a team's roster (needs c1)")
      assert.include(userOf(secondExecute), "- c1 alpha({\"q\":\"lakers\"}) -> ok: {\"echo\":{\"q\":\"lakers\"},\"tool\":\"alpha\"}")
      assert.notInclude(userOf(answerRequest), "Hint")
      assert.include(userOf(answerRequest), "- c2 bravo({\"q\":\"lakers\"}) -> ok:")
    }))

  it.live("without hints the planner names slots only, then binds the tools the searcher found; a role may use another model", () =>
    Effect.gen(function*() {
      const unbound = [{ id: "team", slot: "alpha team lookup", deps: [] }]
      const server = yield* roleServer({
        plan: [
          json({ reason: "One lookup.", nodes: unbound }),
          json({ reason: "alpha serves the lookup.", nodes: [{ ...unbound[0], tool: "alpha" }] })
        ],
        search: [json({ queries: [{ slot: "team", query: "alpha lookup" }] })],
        execute: [json({ calls: [{ node: "team", arguments: { q: "lakers" } }] })],
        answer: [json({ answer: "The team is lakers." })]
      })
      const { trajectory: t, requests } = yield* rolloutWith(server, { hints: [], models: { answer: "answer-model" } })
      assert.strictEqual(t.policy, "teacher-llm:teacher-model(answer=answer-model)")
      assert.deepStrictEqual(requests.map(roleOf), ["plan", "search", "plan", "execute", "answer"])
      assert.deepStrictEqual(actions(t), ["search team", "call team", "answer"])
      assert.deepStrictEqual(t.steps[0]?.turn?.plan?.nodes, [{ id: callId("team"), slot: "alpha team lookup", deps: [] }])
      // the revised plan binds the tool and comes with the first call
      assert.deepStrictEqual(t.steps[1]?.turn?.plan?.nodes, [{ id: callId("team"), tool: toolName("alpha"), slot: "alpha team lookup", deps: [] }])
      const revision = userOf(requests[2])
      assert.include(revision, "## Tools found so far\n### alpha\nThe alpha tool.")
      assert.include(revision, "## Current plan\n{\"nodes\":[{\"id\":\"team\",\"slot\":\"alpha team lookup\",\"deps\":[]}]}")
      assert.include(revision, "- team (\"alpha team lookup\"): no tool found yet (searched 1 time)")
      assert.isTrue(requests.every((r) => !userOf(r).includes("Hint")))
      assert.deepStrictEqual(requests.map((r) => bodyOf(r).model), ["teacher-model", "teacher-model", "teacher-model", "teacher-model", "answer-model"])
    }))

  it.live("ReAct: the plan comes with the first single action; later slots are searched in turn without re-planning", () =>
    Effect.gen(function*() {
      const two = [plannedNodes[0], plannedNodes[2]]
      const server = yield* roleServer({
        plan: [json({ nodes: two })],
        search: [json({ queries: [{ slot: "c1", query: "alpha team" }] }), json({ queries: [{ slot: "c3", query: "charlie city" }] })],
        execute: [json({ calls: [{ node: "c1", arguments: { q: "lakers" } }] }), json({ calls: [{ node: "c3", arguments: { q: "paris" } }] })],
        answer: [json({ answer: "lakers; paris." })]
      })
      const { trajectory: t, requests } = yield* rolloutWith(server, {}, "ReAct")
      assert.deepStrictEqual(requests.map(roleOf), ["plan", "search", "execute", "search", "execute", "answer"])
      assert.deepStrictEqual(actions(t), ["search c1", "call c1", "search c3", "call c3", "answer"])
      assert.strictEqual(t.steps[0]?.turn?.plan?.nodes.length, 2)
      assert.isTrue(t.steps.slice(1).every((s) => s.turn?.plan === undefined && (s.validation.dropped ?? []).length === 0))
    }))

  it.live("a reply that cannot be used gets one repair request quoting the problem; the repaired reply is used", () =>
    Effect.gen(function*() {
      const cycle = [{ id: "c1", tool: "alpha", deps: ["c2"] }, { id: "c2", tool: "bravo", deps: ["c1"] }, { id: "c3", tool: "charlie" }]
      const server = yield* roleServer({
        plan: [json({ nodes: cycle }, 90, 9), json({ reason: "Fixed.", nodes: plannedNodes }, 110, 11)],
        search: [Reply.json(completion("```json\n" + JSON.stringify(goodSearch) + "\n```", 50, 5))],
        execute: [
          json({ calls: [{ node: "c1", arguments: { q: "lakers" } }, { node: "c3", arguments: { q: "paris" } }] }),
          json({ calls: [{ node: "c2", arguments: { q: { $ref: "c1.echo.q" } } }] })
        ],
        answer: [json({ answer: "lakers, lakers, paris." })]
      })
      const { trajectory: t, stats, requests } = yield* rolloutWith(server)
      assert.deepStrictEqual(requests.map(roleOf).slice(0, 3), ["plan", "plan", "search"])
      const repair = bodyOf(requests[1] as RecordedRequest).messages
      assert.deepStrictEqual(repair.map((m) => m.role), ["system", "user", "assistant", "user"])
      assert.strictEqual(repair[2]?.content, JSON.stringify({ nodes: cycle }))
      assert.include(repair[3]?.content ?? "", "Your reply could not be used: the plan is not a DAG: dependency cycle")
      assert.include(repair[3]?.content ?? "", TeacherLlm.replyShapes.plan)
      assert.deepStrictEqual(stats.roles.plan, { calls: 2, repairs: 1, fallbacks: 0, promptTokens: 200, completionTokens: 20 })
      assert.strictEqual(t.steps[0]?.turn?.plan?.nodes.length, 3)
      assert.strictEqual(t.steps[0]?.turn?.think, "Fixed. One query per slot.")
      // the round's usage includes the failed first try and its repair
      assert.deepStrictEqual(t.steps[0]?.usage, { promptTokens: 250, completionTokens: 25 })
      assert.strictEqual(t.stop, "answer")
    }))

  it.live("a reply unusable twice: the scripted role acts for that round, counted and logged; the LLM roles resume after", () =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      const server = yield* roleServer({
        plan: [json({ nodes: plannedNodes })],
        search: [json(goodSearch)],
        execute: [
          json({ calls: [{ node: "c9", arguments: {} }] }),
          Reply.json(completion("I would call alpha with lakers.")),
          json({ calls: [{ node: "c2", arguments: { q: { $ref: "c1.echo.q" } } }] })
        ],
        answer: [json({ answer: "lakers; lakers; paris." })]
      })
      const { trajectory: t, stats, requests } = yield* rolloutWith(server).pipe(
        Effect.provide(Logger.layer([Logger.map(Logger.formatJson, (line) => void lines.push(line))]))
      )
      assert.deepStrictEqual(requests.map(roleOf), ["plan", "search", "execute", "execute", "execute", "answer"])
      assert.include(bodyOf(requests[3] as RecordedRequest).messages[3]?.content ?? "", "node \"c9\" is not ready")
      // the stand-in scripted executor made the gold calls of the ready nodes
      assert.deepStrictEqual(t.steps[1]?.turn?.calls.map((c) => [c.id as string, c.arguments]), [["c1", { q: "lakers" }], ["c3", { q: "paris" }]])
      assert.deepStrictEqual(stats.roles.execute, { calls: 3, repairs: 1, fallbacks: 1, promptTokens: 300, completionTokens: 30 })
      assert.strictEqual(stats.roles.plan.fallbacks + stats.roles.search.fallbacks + stats.roles.answer.fallbacks, 0)
      const warnings = lines.filter((l) => l.includes("the scripted execute acts this round"))
      assert.strictEqual(warnings.length, 1)
      assert.include(warnings[0] ?? "", "roster")
      assert.strictEqual(t.stop, "answer")
      assert.strictEqual(t.answer, "lakers; lakers; paris.")
    }))

  it.live("the API key is in no log line and no error, even when the server echoes it; an endpoint failure ends the rollout", () =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      // a server that leaks the key into the model's replies: as a bearer header, then bare, where the problem quotes it
      const leak = (slot: string) => json({ queries: [{ slot, query: "team" }] })
      const server = yield* roleServer({
        plan: [json({ nodes: plannedNodes })],
        search: [(r) => leak(r.headers["authorization"] ?? ""), leak(SECRET)],
        execute: [(r) => Reply.json({ error: { message: `denied for ${r.headers["authorization"] ?? ""} (${SECRET})` } }, { status: 401 })]
      })
      const { trajectory: t, stats } = yield* rolloutWith(server, { apiKey: Redacted.make(SECRET) }).pipe(
        Effect.provide(Logger.layer([Logger.map(Logger.formatJson, (line) => void lines.push(line))]))
      )
      assert.strictEqual(stats.roles.search.fallbacks, 1)
      const warning = lines.find((l) => l.includes("the scripted search acts this round")) ?? ""
      assert.include(warning, "slot \\\"<redacted>\\\" is not one of c1, c2, c3")
      assert.strictEqual(t.stop, "policy_error")
      assert.include(t.error ?? "", "teacher-llm:teacher-model (execute)")
      assert.include(t.error ?? "", "401")
      assert.include(t.error ?? "", "denied for Bearer <redacted> (<redacted>)")
      assert.notInclude([t.error ?? "", JSON.stringify(t), ...lines].join("\n"), SECRET)
    }))

  it.live("the layer from configuration values: name, privileged, and a bad option is a ConfigError", () =>
    Effect.gen(function*() {
      const server = yield* roleServer({})
      const library = libraryLayer(names)
      const policy = yield* Effect.gen(function*() {
        return yield* Policy
      }).pipe(Effect.provide(TeacherLlm.layerConfig({}, { baseUrl: `${server.url}/v1`, model: "env-model" }).pipe(Layer.provide(library))))
      assert.strictEqual(policy.name, "teacher-llm:env-model")
      assert.isTrue(policy.privileged)
      const bad = yield* Effect.flip(
        Layer.build(TeacherLlm.layer({ temperature: 3 }).pipe(Layer.provide(Layer.mergeAll(clientFor(server), library)))).pipe(Effect.scoped)
      )
      assert.strictEqual(bad._tag, "ConfigError")
      assert.strictEqual(bad.field, "temperature")
      const empty = yield* Effect.flip(
        Layer.build(TeacherLlm.layer({ models: { plan: " " } }).pipe(Layer.provide(Layer.mergeAll(clientFor(server), library)))).pipe(Effect.scoped)
      )
      assert.strictEqual(empty._tag === "ConfigError" ? empty.field : "", "models.plan")
    }))

  it.live("bad sampling options are the client's ConfigErrors: field, value and message", () =>
    Effect.gen(function*() {
      const server = yield* roleServer({})
      const build = (options: TeacherLlm.TeacherLlmOptions) =>
        Effect.flip(Layer.build(TeacherLlm.layer(options).pipe(Layer.provide(Layer.mergeAll(clientFor(server), libraryLayer(names))))).pipe(Effect.scoped))
      const hot = yield* build({ temperature: 2.5 })
      assert.deepStrictEqual([hot.field, hot.value, hot.message], ["temperature", "2.5", "temperature must be between 0 and 2"])
      const negative = yield* build({ temperature: -0.1 })
      assert.strictEqual(negative.field, "temperature")
      for (const maxTokens of [0, 1.5]) {
        const bad = yield* build({ maxTokens })
        assert.deepStrictEqual([bad.field, bad.value, bad.message], ["maxTokens", String(maxTokens), "maxTokens must be a positive integer"])
      }
      const both = yield* build({ temperature: 9, maxTokens: 0 })
      assert.strictEqual(both.field, "temperature")
    }))
})

// ---------------------------------------------------------------------------------------------------------------
// Readers and prompts, without a server

const library = makeLibrary("test", names.map((n) => tool(n)), DepGraph.empty)

const contextFor = (t: Task): PolicyContext => ({
  request: t.request,
  paradigm: "ParaAct",
  round: 0,
  maxRounds: 12,
  controller: "Need",
  history: [],
  tools: [],
  seed: 1,
  task: t
})

const inputFor = (t: Task, nodes: Plan["nodes"] = []): Teacher.RoleInput => ({
  context: contextFor(t),
  task: t,
  board: Teacher.readBoard(t, [], [], nodes),
  random: rng(1)
})

const failure = <A>(r: Result.Result<A, string>): string => (Result.isFailure(r) ? r.failure : "")

describe("the role replies", () => {
  it("the planner: unknown tool names are dropped, ids are checked, a cycle or a reused id is refused", () => {
    const read = TeacherLlm.readPlan(library, [])
    const ok = read(`Here you go: {"nodes": [{"id": "c1", "slot": " find ", "tool": "alpha"}, {"id": "c2", "tool": "made_up", "deps": ["c1", "c1"]}, {"id": "c3", "tool": null}]}`)
    assert.isTrue(Result.isSuccess(ok))
    if (Result.isSuccess(ok)) {
      assert.deepStrictEqual(ok.success.value.nodes, [
        { id: callId("c1"), tool: toolName("alpha"), slot: "find", deps: [] },
        { id: callId("c2"), deps: [callId("c1")] },
        { id: callId("c3"), deps: [] }
      ])
      assert.isUndefined(ok.success.note)
    }
    assert.include(failure(read("no json here")), "")
    assert.notStrictEqual(failure(read("no json here")), "")
    assert.include(failure(read(`{"nodes": []}`)), "1 to 32 nodes")
    assert.include(failure(read(`{"nodes": [{"id": "c1_r2"}]}`)), "not ending in _r")
    assert.include(failure(read(`{"nodes": [{"id": "1x"}]}`)), "nodes[0]: id \"1x\"")
    assert.include(failure(read(`{"nodes": [{"id": "a", "deps": ["b"]}]}`)), "unknown node \"b\"")
    assert.include(failure(read(`{"nodes": [{"id": "a"}], "reason": 3}`)), "reason")
  })

  it("the searcher: one non-blank query per requested slot, in the slots' order", () => {
    const slots = [{ id: callId("a"), deps: [] }, { id: callId("b"), deps: [] }]
    const read = TeacherLlm.readSearch(slots)
    const ok = read(`{"queries": [{"slot": "b", "query": "  roster   list "}, {"slot": "a", "query": "team"}]}`)
    assert.deepStrictEqual(Result.isSuccess(ok) ? ok.success.value : [], [{ slot: "a", query: "team" }, { slot: "b", query: "roster list" }])
    assert.include(failure(read(`{"queries": [{"slot": "a", "query": "x"}]}`)), "no query for slot(s) b")
    assert.include(failure(read(`{"queries": [{"slot": "z", "query": "x"}]}`)), "slot \"z\" is not one of a, b")
    assert.include(failure(read(`{"queries": [{"slot": "a", "query": " "}, {"slot": "b", "query": "x"}]}`)), "blank")
    assert.include(failure(read(`{"queries": [{"slot": "a", "query": "x"}, {"slot": "a", "query": "y"}]}`)), "has a query already")
  })

  it("the executor: ready nodes only, once each, well-formed refs; refs to node ids point at the completing call", () => {
    const ready = [{ id: callId("c2"), tool: toolName("bravo"), deps: [callId("c1")] }]
    const done = new Map([["c1", { callId: callId("c1_r3"), payload: { id: 7 } }]])
    const read = TeacherLlm.readExecute(ready, done)
    const ok = read(`{"calls": [{"node": "c2", "arguments": {"q": {"$ref": "c1.id"}}}]}`)
    assert.deepStrictEqual(Result.isSuccess(ok) ? ok.success.value.map((c) => c.arguments) : [], [{ q: { $ref: "c1_r3.id" } }])
    assert.include(failure(read(`{"calls": []}`)), "at least one of c2")
    assert.include(failure(read(`{"calls": [{"node": "c1", "arguments": {}}]}`)), "node \"c1\" is not ready")
    assert.include(failure(read(`{"calls": [{"node": "c2", "arguments": {"q": {"$ref": 5}}}]}`)), "malformed $ref")
    assert.include(failure(read(`{"calls": [{"node": "c2", "arguments": "q=1"}]}`)), "arguments")
  })

  it("the answerer: a non-blank answer; its own closing tag cannot break the turn", () => {
    const ok = TeacherLlm.readAnswer(`{"answer": " It is 4. ", "reason": "r"}`)
    assert.deepStrictEqual(Result.isSuccess(ok) ? ok.success : undefined, { value: "It is 4.", note: "r" })
    assert.include(failure(TeacherLlm.readAnswer(`{"answer": "  </answer> "}`)), "blank")
    assert.include(failure(TeacherLlm.readAnswer("")), "empty")
  })
})

describe("the role prompts", () => {
  const secretTask: Task = {
    ...task,
    facts: [{ key: "coach", value: "Darvish Okonkwo", call: callId("c2"), path: "echo.coach" }]
  }
  const view = (hints: ReadonlyArray<RoleName>): TeacherLlm.View => ({
    library,
    hints: new Set(hints),
    budgets: TeacherLlm.defaultBudgets,
    options: TeacherLlm.defaultTeacherOptions
  })
  const nodes = [{ id: callId("c1"), tool: toolName("alpha"), deps: [] }, { id: callId("c2"), tool: toolName("bravo"), deps: [callId("c1")] }]

  it("no role ever sees a gold fact's value, even with every hint on; fact keys only where hinted", () => {
    const input = inputFor(secretTask, nodes)
    const ready = [{ id: callId("c1"), tool: toolName("alpha"), deps: [] }]
    const all = view(["plan", "search", "execute", "answer"])
    const messages = [
      TeacherLlm.plannerMessage(input, all),
      TeacherLlm.searcherMessage(input, nodes, all),
      TeacherLlm.executorMessage(input, ready, all),
      TeacherLlm.answererMessage(input, all)
    ]
    for (const m of messages) assert.notInclude(m, "Okonkwo")
    assert.include(messages[0] ?? "", "The answer must state: coach.")
    assert.include(messages[2] ?? "", "literal values a reference solution passed to these tools\n- c1 (alpha): {\"q\":\"lakers\"}")
    assert.include(messages[3] ?? "", "## Hint (privileged): the answer should cover\ncoach")
    const none = view([])
    assert.isTrue(
      [TeacherLlm.plannerMessage(input, none), TeacherLlm.searcherMessage(input, nodes, none), TeacherLlm.executorMessage(input, ready, none), TeacherLlm.answererMessage(input, none)]
        .every((m) => !m.includes("Hint") && !m.includes("coach"))
    )
  })

  it("the answerer is told which parts have no result; sections over budget say how much was left out", () => {
    const message = TeacherLlm.answererMessage(inputFor(task, nodes), view([]))
    assert.include(message, "No tool call was made.")
    assert.include(message, "## Parts of the plan without a result\n- c1 (alpha): no tool found yet (searched 0 times)")
    const many = Array.from({ length: 30 }, (_, i) => tool(`tool_${i}`, "x".repeat(900)))
    const context = { ...contextFor(task), tools: many }
    const planner = TeacherLlm.plannerMessage({ ...inputFor(task), context }, { ...view([]), budgets: { ...TeacherLlm.defaultBudgets, section: 5_000 } })
    assert.match(planner, /\((\d+) more tools omitted\)/)
    assert.include(planner, "... [500 more characters]")
  })

  it("the policy name lists the roles on another model; the per-call seed depends on round, role and attempt", () => {
    assert.strictEqual(TeacherLlm.policyName("m"), "teacher-llm:m")
    assert.strictEqual(TeacherLlm.policyName("m", { plan: "m", answer: "big" }), "teacher-llm:m(answer=big)")
    const seeds = new Set([
      TeacherLlm.roleSeed(1, 0, "plan", 0),
      TeacherLlm.roleSeed(1, 0, "plan", 1),
      TeacherLlm.roleSeed(1, 1, "plan", 0),
      TeacherLlm.roleSeed(1, 0, "search", 0),
      TeacherLlm.roleSeed(2, 0, "plan", 0)
    ])
    assert.strictEqual(seeds.size, 5)
    for (const s of seeds) assert.isTrue(Number.isInteger(s) && s >= 0 && s < 2 ** 31)
  })
})

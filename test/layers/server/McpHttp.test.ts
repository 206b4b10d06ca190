import { assert, layer } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Effect, Layer } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { createServer } from "node:http"
import * as McpEnvironment from "../../../layers/server/McpEnvironment.ts"
import * as McpHttp from "../../../layers/server/McpHttp.ts"
import type { Trajectory } from "../../../src/domain/Trajectory.ts"
import type { Turn } from "../../../src/domain/Turn.ts"
import { Judge } from "../../../src/judge/Judge.ts"
import { canonicalJson } from "../../../src/math/CanonicalJson.ts"
import * as Reward from "../../../src/math/Reward.ts"
import * as Scoring from "../../../src/eval/Scoring.ts"
import * as ParaAct from "../../../src/protocol/ParaAct.ts"
import * as Session from "../../../src/runtime/Session.ts"
import { policyLabel } from "../../../src/service/McpEpisodes.ts"
import { tools } from "../../../src/service/McpTools.ts"
import { TaskSource } from "../../../src/toolenv/TaskSource.ts"
import { ToolLibrary } from "../../../src/toolenv/ToolLibrary.ts"
import { callTool, goldLayers, timeless } from "../../support/McpPeer.ts"

const environment = McpEnvironment.layerGenerated({ size: 2000 }, { faultRate: 0 })
const server = HttpRouter.serve(McpHttp.layer(), { disableLogger: true, disableListenLog: true }).pipe(
  Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
)
const app = server.pipe(Layer.provideMerge(environment))

const clientName = "paraagent-test"

/** A new MCP session (its own client id, so its own episode) against the served endpoint. */
const connect = Effect.gen(function*() {
  const http = yield* HttpServer.HttpServer
  const address = http.address
  if (address._tag === "UnixPathAddress") return yield* Effect.die("the test server is not on TCP")
  const client = new Client({ name: clientName, version: "1.0.0" })
  const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${address.port}${McpHttp.defaultPath}`))
  yield* Effect.acquireRelease(Effect.promise(() => client.connect(transport)), () => Effect.promise(() => client.close()))
  return client
})

layer(app)("MCP over streamable HTTP (the official SDK client as the peer)", (it) => {
  it.effect("lists the seven tools, each with an object JSON Schema that refuses unknown keys", () =>
    Effect.scoped(Effect.gen(function*() {
      const client = yield* connect
      const listed = yield* Effect.promise(() => client.listTools())
      assert.deepStrictEqual(listed.tools.map((t) => t.name), tools.map((t) => t.name))
      assert.deepStrictEqual(listed.tools.map((t) => t.name), ["start_episode", "search_tools", "describe_tool", "call_tool", "call_tools", "answer", "episode_state"])
      for (const t of listed.tools) {
        assert.strictEqual(t.inputSchema.type, "object")
        assert.strictEqual((t.inputSchema as { additionalProperties?: unknown }).additionalProperties, false)
        assert.isTrue((t.description ?? "").length > 40)
      }
      const calls = listed.tools.find((t) => t.name === "call_tools")
      assert.deepStrictEqual(calls?.inputSchema.required, ["calls"])
    })))

  it.effect("a whole episode: start, search, parallel call_tools by gold layer, answer → verdict and R_ans; the trajectory equals a Session stepped in-process with the same turns, scored the same", () =>
    Effect.scoped(Effect.gen(function*() {
      const client = yield* connect
      const source = yield* TaskSource
      const library = yield* ToolLibrary
      const judge = yield* Judge
      const [task] = yield* source.sample({ split: "test", count: 1, levels: ["I2"] })
      assert.isDefined(task)
      if (task === undefined) return

      const started = yield* Effect.promise(() => callTool(client, "start_episode", { split: "test", level: "I2", index: 0 }))
      assert.isFalse(started.isError, started.text)
      assert.strictEqual(started.value?.["taskId"], task.id)
      assert.strictEqual(started.value?.["request"], task.request)

      // the turns, written here independently of the server's turn builder
      const goldTools = [...new Set(task.gold.map((c) => c.tool))]
      const queries = goldTools.map((name, i) => {
        const spec = library.get(name)
        return { slot: `s${i + 1}`, query: `${spec?.apiName ?? name} ${spec?.description ?? ""}`.trim() }
      })
      const turns: Array<Turn> = [{ searches: queries, calls: [] }]
      const searched = yield* Effect.promise(() => callTool(client, "search_tools", { queries }))
      assert.isFalse(searched.isError, searched.text)
      const hits = (searched.value?.["searches"] as ReadonlyArray<{ readonly hits: ReadonlyArray<{ readonly tool: string }> }>).flatMap((s) => s.hits.map((h) => h.tool))
      for (const name of goldTools) assert.include(hits, name, `search found the gold tool ${name}`)

      const described = yield* Effect.promise(() => callTool(client, "describe_tool", { name: goldTools[0] }))
      assert.isFalse(described.isError, described.text)
      assert.deepStrictEqual(described.value?.["parameters"], library.get(goldTools[0] as string)?.parameters)

      for (const gold of goldLayers(task)) {
        const calls = gold.map((c) => ({ id: c.id, tool: c.tool, arguments: c.arguments }))
        turns.push({ searches: [], calls })
        const round = yield* Effect.promise(() => callTool(client, "call_tools", { calls }))
        assert.isFalse(round.isError, round.text)
        const observations = round.value?.["observations"] as ReadonlyArray<{ readonly id: string; readonly status: number }>
        assert.deepStrictEqual(observations.map((o) => [o.id, o.status]), calls.map((c) => [c.id, 200]), round.text)
        assert.deepStrictEqual(round.value?.["issues"], [])
      }

      const answer = task.facts.map((f) => `${f.key}: ${f.value}`).join("; ")
      turns.push({ searches: [], calls: [], answer })
      const answered = yield* Effect.promise(() => callTool(client, "answer", { answer }))
      assert.isFalse(answered.isError, answered.text)
      assert.strictEqual(answered.value?.["done"], true)
      assert.strictEqual(answered.value?.["stop"], "answer")
      const scoring = answered.value?.["scoring"] as { readonly verdict: { readonly quality: string; readonly faithfulness: string; readonly utility: string }; readonly answerReward: { readonly pattern: string; readonly rAns: number } }
      assert.deepStrictEqual([scoring.verdict.quality, scoring.verdict.faithfulness, scoring.verdict.utility], ["YES", "YES", "YES"])
      assert.deepStrictEqual(scoring.answerReward, { pattern: "111", rAns: Reward.defaultRewardConfig.answer.table["111"] })

      const state = yield* Effect.promise(() => callTool(client, "episode_state", { trajectory: true }))
      assert.isFalse(state.isError, state.text)
      assert.strictEqual(state.value?.["rounds"], turns.length)
      const served = state.value?.["trajectory"] as Trajectory

      // the same turns stepped into a Session in-process, judged and rewarded the same way
      const session = yield* Session.open({ task, paradigm: "ParaAct", seed: 1, policy: policyLabel({ id: "", name: clientName }) }, { faults: false })
      for (const turn of turns) yield* session.step({ text: ParaAct.printTurn(turn), turn, usage: { promptTokens: 0, completionTokens: 0 } })
      const local = yield* session.trajectory
      const judged: Trajectory = { ...local, verdict: yield* judge.judge(task, local) }
      const equivalent = yield* Scoring.equivalence
      const scored = Reward.attach(judged, Scoring.rewardsOf(task, judged, { deps: (a, b) => library.graph.kind(a, b), equivalent, reward: Reward.defaultRewardConfig }))
      assert.strictEqual(canonicalJson(timeless(served) as never), canonicalJson(timeless(scored) as never))
      assert.strictEqual(served.steps.length, turns.length)
      assert.strictEqual(served.answerReward?.rAns, scoring.answerReward.rAns)
    })))

  it.effect("the verdict a client receives names what is missing and quotes no gold value (issue 24); the judge's full rationale does", () =>
    Effect.scoped(Effect.gen(function*() {
      const client = yield* connect
      const source = yield* TaskSource
      const judge = yield* Judge
      const [task] = yield* source.sample({ split: "test", count: 1, levels: ["I2"] })
      if (task === undefined) return assert.fail("no task")
      const started = yield* Effect.promise(() => callTool(client, "start_episode", { split: "test", level: "I2", index: 0 }))
      assert.strictEqual(started.value?.["taskId"], task.id)
      // every gold value negated: the answer mentions them all and states none
      const answer = task.facts.map((f) => `${f.key}: not ${f.value}`).join("; ")
      const answered = yield* Effect.promise(() => callTool(client, "answer", { answer }))
      assert.isFalse(answered.isError, answered.text)
      const scoring = answered.value?.["scoring"] as { readonly verdict: { readonly quality: string; readonly rationale: string } }
      const state = yield* Effect.promise(() => callTool(client, "episode_state", { trajectory: true }))
      const served = state.value?.["trajectory"] as Trajectory
      const full = yield* judge.judge(task, served)
      assert.strictEqual(scoring.verdict.quality, "NO")
      // the judge's own rationale quotes the gold values (so this test can see a redaction that does nothing)
      assert.isTrue(task.facts.some((f) => (full.rationale ?? "").includes(`=${JSON.stringify(f.value)}`)), full.rationale)
      for (const shown of [scoring.verdict.rationale, served.verdict?.rationale ?? ""]) {
        assert.include(shown, "missing")
        for (const f of task.facts) {
          assert.notInclude(shown, `=${JSON.stringify(f.value)}`)
          const elsewhere = `${task.request} ${task.facts.map((g) => g.key).join(" ")}`.toLowerCase()
          if (!elsewhere.includes(f.value.toLowerCase())) assert.notInclude(shown.toLowerCase(), f.value.toLowerCase(), shown)
          if (!task.facts.some((g) => f.key.toLowerCase().includes(g.value.toLowerCase()))) assert.include(shown, f.key)
        }
      }
      assert.strictEqual(served.verdict?.rationale, scoring.verdict.rationale)
    })))

  it.effect("bad input is a tool error naming what was wrong, never a crash; a refused turn spends no round; nothing runs after the end", () =>
    Effect.scoped(Effect.gen(function*() {
      const client = yield* connect
      const library = yield* ToolLibrary
      const call = (name: string, args: Record<string, unknown>) => Effect.promise(() => callTool(client, name, args))
      const refused = (name: string, args: Record<string, unknown>, names: string) =>
        Effect.gen(function*() {
          const r = yield* call(name, args)
          assert.isTrue(r.isError, `${name} ${JSON.stringify(args)} should be refused: ${r.text}`)
          assert.include(r.text, names, `${name} ${JSON.stringify(args)}`)
          assert.include(r.text, `${name}:`)
        })

      // before any episode
      yield* refused("search_tools", { queries: [{ query: "weather" }] }, "call start_episode first")
      yield* refused("episode_state", {}, "call start_episode first")
      const unknown = yield* Effect.promise(() => client.callTool({ name: "delete_everything", arguments: {} }).then(() => "no error", (e: unknown) => String(e)))
      assert.include(unknown, "delete_everything")
      // start_episode's arguments
      yield* refused("start_episode", { taskId: "bogus" }, "taskId")
      yield* refused("start_episode", { taskId: "gen-7-test-I1-0", request: "hello" }, "either taskId or request")
      yield* refused("start_episode", { paradigm: "Telepathy" }, "paradigm")
      yield* refused("start_episode", { seed: "one" }, "seed")
      yield* refused("start_episode", { index: 1_000_000 }, "index")
      yield* refused("start_episode", { split: "test", colour: "blue" }, "colour")
      yield* refused("start_episode", { request: "" }, "request")

      const started = yield* call("start_episode", { request: "What is the weather in Ashford?", seed: 3 })
      assert.isFalse(started.isError, started.text)
      assert.match(String(started.value?.["taskId"]), /^own-[0-9a-f]{8}$/)

      // search_tools
      yield* refused("search_tools", { queries: [] }, "queries")
      yield* refused("search_tools", { queries: [{ query: "" }] }, "query")
      yield* refused("search_tools", { queries: Array.from({ length: 17 }, (_, i) => ({ query: `q${i}` })) }, "queries")
      yield* refused("search_tools", { queries: [{ query: "a", slot: "x" }, { query: "b", slot: "x" }] }, "appears twice")
      const searched = yield* call("search_tools", { queries: [{ query: "weather stations in a city" }] })
      assert.isFalse(searched.isError, searched.text)
      const hit = ((searched.value?.["searches"] as ReadonlyArray<{ readonly hits: ReadonlyArray<{ readonly tool: string }> }>)[0]?.hits[0]?.tool) as string
      assert.isString(hit)

      // describe_tool: library tools the episode has not retrieved are refused
      const unretrieved = library.tools.find((t) => t.category !== library.get(hit)?.category)?.name as string
      yield* refused("describe_tool", { name: "no_such_tool" }, "no tool named")
      yield* refused("describe_tool", { name: unretrieved }, "has not been retrieved")
      yield* refused("describe_tool", {}, "name")

      // call_tool / call_tools: malformed turns are refused before they spend a round
      const rounds = async () => (await callTool(client, "episode_state", {})).value?.["rounds"]
      const before = yield* Effect.promise(rounds)
      yield* refused("call_tools", { calls: [{ tool: hit, id: "c1" }, { tool: hit, id: "c1" }] }, "not unique")
      yield* refused("call_tools", { calls: [{ tool: hit, id: "1st" }] }, "id")
      yield* refused("call_tools", { calls: [] }, "calls")
      yield* refused("call_tools", { calls: [{ tool: hit, arguments: [1, 2] }] }, "arguments")
      yield* refused("call_tools", { calls: [{ tool: hit, arguments: { x: { $ref: "c9..bad" } } }] }, "$ref")
      yield* refused("call_tool", { tool: 42 }, "tool")
      yield* refused("call_tool", { tool: hit, args: {} }, "args")
      assert.strictEqual(yield* Effect.promise(rounds), before)

      // a call of a tool the episode has not retrieved is a round with a 404 observation: call_tool reports an error
      const unseen = yield* call("call_tool", { tool: unretrieved, arguments: {} })
      assert.isTrue(unseen.isError)
      assert.include(unseen.text, "unknown_tool")
      assert.include(unseen.text, "has not been retrieved")
      assert.strictEqual(yield* Effect.promise(rounds), (before as number) + 1)

      yield* refused("answer", { answer: "" }, "answer")
      const answered = yield* call("answer", { answer: "I could not find it." })
      assert.isFalse(answered.isError, answered.text)
      assert.strictEqual(answered.value?.["done"], true)
      yield* refused("call_tool", { tool: hit, arguments: {} }, "has ended")
      yield* refused("search_tools", { queries: [{ query: "weather" }] }, "has ended")
      yield* refused("answer", { answer: "again" }, "has ended")
      const state = yield* call("episode_state", {})
      assert.strictEqual(state.value?.["stop"], "answer")
      assert.strictEqual(state.value?.["rounds"], (before as number) + 2)
    })))
})

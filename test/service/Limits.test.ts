import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import type { HttpServer } from "effect/http"
import * as ToolEnvServer from "../../layers/server/ToolEnvServer.ts"
import { limits } from "../../src/service/Api.ts"

// Memory bounded in bytes: every posted or stored field has a size limit (a 400 naming it), and the log's total is
// bounded with least-recently-used eviction.

const key = "limits-test-client-key-0001"
const options: ToolEnvServer.ServerOptions = {
  ...ToolEnvServer.defaultOptions,
  worldSize: 2000,
  mcp: false,
  memoryStore: { maxBytes: 8 * 1024 * 1024, maxTaskBytes: 1024 * 1024 },
  sessions: { ...ToolEnvServer.defaultOptions.sessions, ttlMs: 60_000 }
}
const urlOf = (context: Context.Context<HttpServer.HttpServer>) => Effect.provide(ToolEnvServer.url, context)
const call = (base: string, method: string, route: string, body?: unknown, clientKey = key) =>
  Effect.promise(async () => {
    const res = await fetch(base + route, { method, headers: { "content-type": "application/json", "x-client-key": clientKey }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) })
    const text = await res.text()
    return { status: res.status, text, json: text === "" ? undefined : JSON.parse(text) }
  })

describe("sizes: every posted and stored field is bounded", () => {
  it.live("oversized tasks, fields, turns and token counts are a 400 naming the field; posted tasks past the bound are evicted oldest first", () =>
    Effect.scoped(Effect.gen(function*() {
      const base = yield* urlOf(yield* Layer.build(ToolEnvServer.layer(options)))
      const gold = (n: number, argBytes: number) =>
        Array.from({ length: n }, (_, i) => ({ id: `c${i + 1}`, tool: "sentiment_analysis_for_wire_insights", arguments: { text: "x".repeat(argBytes) }, deps: [] }))
      const refusals: ReadonlyArray<readonly [string, unknown, string]> = [
        // the 0.9 MB task the issue found kept whole, 10,000 times over
        ["/tasks", { request: "r", gold: gold(8, 110_000) }, "task"],
        ["/tasks", { request: "r", gold: gold(limits.goldCalls + 1, 1) }, "task.gold"],
        ["/tasks", { request: "r", categories: Array.from({ length: limits.categories + 1 }, (_, i) => `c${i}`) }, "task.categories"],
        ["/tasks", { request: "r", categories: ["x".repeat(limits.shortText + 1)] }, "task.categories[0]"],
        ["/tasks", { request: "r", gold: gold(1, 1), facts: [{ key: "k", value: "v".repeat(limits.factValue + 1), call: "c1", path: "p" }] }, "task.facts[0].value"],
        ["/sessions", { task: { request: "r", gold: gold(3, 100_000) } }, "task"]
      ]
      for (const [route, body, field] of refusals) {
        const r = yield* call(base, "POST", route, body)
        assert.deepStrictEqual([r.status, r.json.field], [400, field], `${route} ${r.text.slice(0, 200)}`)
      }
      const session = (yield* call(base, "POST", "/sessions", { seed: 1 })).json.sessionId as string
      const stepRefusals: ReadonlyArray<readonly [unknown, string]> = [
        [{ turn: { searches: [], calls: [{ id: "c1", tool: "t", arguments: { blob: "y".repeat(limits.turnBytes) } }] } }, "turn"],
        [{ turn: { searches: [{ slot: "s1", query: "q".repeat(limits.queryChars + 1) }], calls: [] } }, "turn.searches[0].query"],
        [{ text: "x", usage: { promptTokens: -5, completionTokens: 1 } }, "promptTokens"],
        [{ text: "x", usage: { promptTokens: 1, completionTokens: 1e300 } }, "completionTokens"],
        [{ text: "x", usage: { promptTokens: 1.5, completionTokens: 1 } }, "promptTokens"],
        [{ text: "x", logprob: 3 }, "logprob"]
      ]
      for (const [body, field] of stepRefusals) {
        const r = yield* call(base, "POST", `/sessions/${session}/step`, body)
        assert.strictEqual(r.status, 400, r.text.slice(0, 200))
        assert.include(r.json.field ?? JSON.stringify(r.json.errors?.[0]?.path), field)
      }
      assert.strictEqual((yield* call(base, "GET", `/sessions/${session}`)).json.rounds, 0)
      const group = yield* call(base, "POST", "/advantages", { sessions: Array.from({ length: limits.groupSize + 1 }, () => session) })
      assert.deepStrictEqual([group.status, group.json.errors?.[0]?.path], [400, ["payload", "sessions"]])
      // the largest task allowed, posted 12 times into a 1 MiB task bound: the oldest leave, the newest stay
      const big = (i: number) => ({ id: `big-${i}`, request: "r", gold: gold(2, 110_000) })
      for (let i = 0; i < 12; i++) assert.strictEqual((yield* call(base, "POST", "/tasks", big(i))).status, 200)
      const kept = []
      for (let i = 0; i < 12; i++) if ((yield* call(base, "GET", `/tasks/big-${i}`)).status === 200) kept.push(i)
      assert.isAtMost(kept.length, 5)
      assert.deepStrictEqual(kept, Array.from({ length: kept.length }, (_, j) => 12 - kept.length + j))
    })))
})

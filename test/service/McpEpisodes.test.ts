import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as McpEnvironment from "../../layers/server/McpEnvironment.ts"
import { McpEpisodes } from "../../src/service/McpEpisodes.ts"

const environment = McpEnvironment.layerGenerated({ size: 2000 }, { faultRate: 0, episodes: { maxClients: 2 } })

describe("McpEpisodes", () => {
  it.effect("a session's concurrent requests run one round at a time; past maxClients the least recently used session's episode is dropped", () =>
    Effect.gen(function*() {
      const episodes = yield* McpEpisodes
      const a = { id: "session:a", name: "a" }
      yield* episodes.start(a, { request: "Which weather stations are in Ashford?" })
      const rounds = yield* Effect.all([
        episodes.search(a, { queries: [{ query: "weather stations in a city" }] }),
        episodes.search(a, { queries: [{ query: "city weather" }] }),
        episodes.search(a, { queries: [{ query: "station status" }] })
      ], { concurrency: "unbounded" })
      assert.deepStrictEqual(rounds.map((r) => r.round).sort(), [0, 1, 2])
      assert.strictEqual((yield* episodes.state(a, {})).rounds, 3)

      const b = { id: "session:b", name: "b" }
      const c = { id: "session:c", name: "c" }
      yield* episodes.start(b, { request: "hello" })
      yield* episodes.state(a, {})
      yield* episodes.start(c, { request: "hello again" })
      assert.strictEqual(yield* episodes.size, 2)
      assert.strictEqual((yield* episodes.state(a, {})).rounds, 3)
      const dropped = yield* Effect.flip(episodes.state(b, {}))
      assert.strictEqual(dropped.field, "episode")
      assert.include(dropped.message, "start_episode first")
    }).pipe(Effect.provide(environment)))
})

import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as LoopbackServer from "../support/LoopbackServer.ts"
import { spawnProgram } from "../support/Spawn.ts"

const SECRET = "sk-flag-only-4242"
/** The smallest real `npm run compare`: one I1 task, one paradigm, one rollout of one round. */
const small = ["--policy", "openai", "--world-size", "600", "--tasks", "1", "--levels", "I1", "--paradigms", "ReAct", "--group", "1", "--max-rounds", "1"]

describe("npm run compare against an endpoint that only fails (500)", () => {
  it.live("environment and flags merge (flags win), every rollout failing exits non-zero and says why; the key is never printed", () =>
    Effect.gen(function*() {
      const server = yield* LoopbackServer.make({})
      const out = join(mkdtempSync(join(tmpdir(), "paraagent-endpoint-")), "run")
      // the endpoint from the environment, the key from a flag; retries and timeout from the environment
      const r = yield* Effect.promise(() =>
        spawnProgram("programs/compare.ts", [...small, "--api-key", SECRET, "--out", out], {
          PARAAGENT_BASE_URL: `${server.url}/v1`,
          PARAAGENT_MODEL: "env-model",
          PARAAGENT_MAX_RETRIES: "1",
          PARAAGENT_TIMEOUT_MS: "20000"
        })
      )
      assert.notStrictEqual(r.code, 0, r.stderr)
      assert.include(r.stderr, "every one of the 1 rollouts ended policy_error")
      // the run folder is announced before any work, so even a failed run names where its trajectories are
      assert.isTrue(r.stderr.startsWith(`compare: run folder ${out} (`), r.stderr)
      assert.notInclude(r.stdout + r.stderr, SECRET)
      assert.notInclude(r.stdout + r.stderr, "    at ")
      const requests = yield* server.requests
      // 1 + PARAAGENT_MAX_RETRIES attempts, each with the flag's key
      assert.strictEqual(requests.length, 2)
      for (const request of requests) assert.strictEqual(request.headers["authorization"], `Bearer ${SECRET}`)
      assert.strictEqual((requests[0]?.body as { model?: string }).model, "env-model")
      const config = readFileSync(join(out, "config.json"), "utf8")
      assert.notInclude(config, SECRET)
      const endpoint = (JSON.parse(config) as { endpoint: Record<string, unknown> }).endpoint
      assert.deepInclude(endpoint, { model: "env-model", apiKey: "<redacted>", maxRetries: 1, timeoutMs: 20_000 })

      // the endpoint from flags: the environment's retry count still applies
      const flagged = yield* Effect.promise(() =>
        spawnProgram("programs/compare.ts", [...small, "--base-url", `${server.url}/v1`, "--model", "flag-model", "--out", `${out}-2`], {
          PARAAGENT_MAX_RETRIES: "0",
          PARAAGENT_MODEL: "env-model"
        })
      )
      assert.notStrictEqual(flagged.code, 0, flagged.stderr)
      const all = yield* server.requests
      assert.strictEqual(all.length, 3)
      assert.strictEqual((all[2]?.body as { model?: string }).model, "flag-model")
      assert.isUndefined(all[2]?.headers["authorization"])
    }).pipe(Effect.scoped))

  it.live("credentials and a query key in the base URL: Basic auth reaches the server, the path is joined before the query, config.json records neither", () =>
    Effect.gen(function*() {
      const server = yield* LoopbackServer.make({})
      const out = join(mkdtempSync(join(tmpdir(), "paraagent-endpoint-")), "run")
      const password = "pw-in-the-url-77"
      const queryKey = "query-key-5150-abcdef"
      const r = yield* Effect.promise(() =>
        spawnProgram("programs/compare.ts", [...small, "--base-url", `http://alice:${password}@127.0.0.1:${server.port}/v1?api-key=${queryKey}`, "--model", "m", "--out", out], {
          PARAAGENT_MAX_RETRIES: "0"
        })
      )
      assert.notStrictEqual(r.code, 0, r.stderr)
      const [request] = yield* server.requests
      assert.strictEqual(request?.headers["authorization"], `Basic ${Buffer.from(`alice:${password}`).toString("base64")}`)
      assert.strictEqual(request?.url, `/v1/chat/completions?api-key=${queryKey}`)
      const config = readFileSync(join(out, "config.json"), "utf8")
      const trajectories = readFileSync(join(out, "trajectories.jsonl"), "utf8")
      for (const secret of [password, queryKey]) assert.notInclude(r.stdout + r.stderr + config + trajectories, secret)
      assert.include(config, `"http://127.0.0.1:${server.port}/v1?api-key=<redacted>"`)
    }).pipe(Effect.scoped))
})

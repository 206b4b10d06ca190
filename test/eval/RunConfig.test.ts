import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Option, Redacted, Schema } from "effect"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as App from "../../layers/App.ts"
import * as OpenAiClient from "../../layers/model/OpenAiClient.ts"
import { Task } from "../../src/domain/Task.ts"
import * as Job from "../../src/eval/ComparisonJob.ts"
import * as RunConfig from "../../src/eval/RunConfig.ts"
import * as Provenance from "../../src/io/Provenance.ts"
import { TaskSource } from "../../src/toolenv/TaskSource.ts"

const tmp = () => mkdtempSync(join(tmpdir(), "paraagent-runconfig-"))

/** A small run: what `npm start --world-size 3000 --tasks 2 --levels I1,I3 --paradigms ParaAct --group 1 --seed 5` decodes to. */
const smallConfig = (out: string): RunConfig.RunConfig => ({
  tasks: 2,
  levels: ["I1", "I3"],
  seed: 5,
  worldSeed: 11,
  worldSize: 3_000,
  paradigms: ["ParaAct"],
  group: 1,
  policy: "teacher",
  mistakeRate: 0.2,
  mode: "text",
  judge: "rule",
  retriever: "bm25",
  faults: true,
  faultRate: RunConfig.faultRateOf(true),
  maxRounds: 8,
  concurrency: 2,
  estimator: "grpo",
  out
})

describe("flag ranges (the schemas behind RunConfig.intFlag / numberFlag, which every program's numeric flags use)", () => {
  it("refuses values outside each cap, fractions where an integer is asked, and non-finite numbers; accepts the bounds", () => {
    const refused = (schema: Schema.Decoder<unknown>, value: number) => Schema.decodeUnknownOption(schema)(value)._tag === "None"
    const cases: ReadonlyArray<readonly [keyof typeof RunConfig.caps, ReadonlyArray<number>]> = [
      ["worldSize", [10, 0, -1, 1e8, 600.5]],
      ["maxRounds", [0, -5, 101]],
      ["group", [0, 1e8]],
      ["tasks", [0, 1e8]],
      ["concurrency", [0, 257]]
    ]
    for (const [cap, bad] of cases) {
      const range = RunConfig.caps[cap] as { readonly minimum: number; readonly maximum: number }
      const schema = RunConfig.IntIn(range)
      for (const v of bad) assert.isTrue(refused(schema, v), `${cap} ${v}`)
      assert.isFalse(refused(schema, range.minimum), `${cap} minimum`)
      assert.isFalse(refused(schema, range.maximum), `${cap} maximum`)
    }
    for (const v of [2, -0.1, Number.NaN, Number.POSITIVE_INFINITY]) assert.isTrue(refused(RunConfig.Rate, v), `rate ${v}`)
    assert.isFalse(refused(RunConfig.Rate, 0.05))
  })
})

describe("RunConfig", () => {
  it.effect("config.json rebuilds the job: the decoded config gives the same options and the same tasks", () =>
    Effect.gen(function*() {
      const out = join(tmp(), "run")
      const config = smallConfig(out)
      const provenance = yield* Provenance.read
      yield* Job.run({ ...RunConfig.jobOptions(config, false), record: { ...config, ...provenance } }).pipe(
        Effect.provide(App.layer(App.optionsFromRunConfig(config)))
      )
      const text = readFileSync(join(out, "config.json"), "utf8")
      const written = JSON.parse(text) as Record<string, unknown>
      // every decoded field, plus provenance and what the job resolved
      for (const key of Object.keys(config)) assert.deepStrictEqual(written[key], (config as Record<string, unknown>)[key], key)
      assert.strictEqual(written["version"], "0.1.0")
      assert.match(String(written["commit"]), /^([0-9a-f]{40}|unknown)$/)
      const resolved = written["resolved"] as Record<string, unknown>
      assert.strictEqual(resolved["library"], "generated(seed=11, tools=3000)")
      assert.isObject(resolved["reward"])
      assert.strictEqual((resolved["rollout"] as Record<string, unknown>)["maxRounds"], 8)

      const decoded = yield* RunConfig.decodeConfigJson(text)
      assert.deepStrictEqual(decoded, config)
      assert.deepStrictEqual(RunConfig.jobOptions(decoded, false), RunConfig.jobOptions(config, false))
      const again = yield* TaskSource.use((source) => Job.drawTasks(source, RunConfig.jobOptions(decoded, false))).pipe(
        Effect.provide(App.layer(App.optionsFromRunConfig(decoded)))
      )
      const original = readFileSync(join(out, "tasks.jsonl"), "utf8").trim().split("\n").map((line) => Schema.decodeUnknownSync(Schema.fromJsonString(Task))(line))
      assert.strictEqual(original.length, 4)
      assert.deepStrictEqual(again.map((t) => [t.id, t.request]), original.map((t) => [t.id, t.request]))
    }).pipe(Effect.provide(NodeServices.layer)))

  it.effect("a config.json with a value out of range does not decode", () =>
    Effect.gen(function*() {
      const bad = JSON.stringify({ ...smallConfig("x"), maxRounds: 0 })
      const error = yield* Effect.flip(RunConfig.decodeConfigJson(bad))
      assert.strictEqual(error._tag, "SchemaError")
      assert.include(error.message, "maxRounds")
    }))

  it.effect("the endpoint is the environment with the given flags laid over it (flags win, the rest stays)", () =>
    Effect.gen(function*() {
      const env = ConfigProvider.layer(ConfigProvider.fromUnknown({
        PARAAGENT_BASE_URL: "http://127.0.0.1:1/v1",
        PARAAGENT_MODEL: "from-env",
        PARAAGENT_TIMEOUT_MS: "4321",
        PARAAGENT_MAX_RETRIES: "7"
      }))
      const given: RunConfig.EndpointFlags = {
        baseUrl: Option.some("http://user:pw@127.0.0.1:2/v1"),
        model: Option.none(),
        apiKey: Option.some(Redacted.make("flag-key")),
        timeoutMs: Option.none(),
        maxRetries: Option.some(2)
      }
      const endpoint = yield* OpenAiClient.configFromEnv(RunConfig.endpointOverrides(given)).pipe(Effect.provide(env))
      assert.strictEqual(endpoint.baseUrl, "http://127.0.0.1:2/v1" /* credentials moved out of the URL (sent as Basic auth only without a key) */)
      assert.strictEqual(endpoint.model, "from-env")
      assert.strictEqual(endpoint.timeoutMs, 4321)
      assert.strictEqual(endpoint.maxRetries, 2)
      assert.strictEqual(endpoint.apiKey === undefined ? "" : Redacted.value(endpoint.apiKey), "flag-key")
      const record = RunConfig.endpointRecord(endpoint)
      assert.deepStrictEqual(record, {
        baseUrl: "http://127.0.0.1:2/v1",
        model: "from-env",
        apiKey: "<redacted>",
        timeoutMs: 4321,
        maxRetries: 2,
        temperature: OpenAiClient.defaults.temperature,
        maxTokens: OpenAiClient.defaults.maxTokens
      })
      assert.notInclude(JSON.stringify(record), "flag-key")
      assert.notInclude(JSON.stringify(record), "pw")
    }))

  it("needs an endpoint only for the LLM policies and the LLM judge", () => {
    assert.isFalse(RunConfig.needsEndpoint({ policy: "teacher", judge: "rule" }))
    assert.isTrue(RunConfig.needsEndpoint({ policy: "teacher", judge: "llm" }))
    assert.isTrue(RunConfig.needsEndpoint({ policy: "openai", judge: "rule" }))
  })
})


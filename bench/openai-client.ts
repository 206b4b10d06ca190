/**
 * OpenAiClient overhead: the client (schema checks, retries, timeout, effect/http over fetch) against a bare
 * `fetch` + `JSON.parse`, side by side against one loopback server. Run: `npx tsx bench/openai-client.ts`.
 */
import { Effect } from "effect"
import * as OpenAiClient from "../layers/model/OpenAiClient.ts"
import { LoopbackServer, Reply } from "../test/support/LoopbackServer.ts"
import * as BenchFlags from "./BenchFlags.ts"

// no flags: an unknown one is refused before any work
await BenchFlags.parse("openai-client", "OpenAiClient overhead against a bare fetch + JSON.parse on one loopback server", {})

const N = 400
const CONCURRENCY = 16

// A realistic reply: a ParaAct turn of ~1 kB with 300 token logprobs.
const content = `<think>\n${"reason ".repeat(100)}\n</think>\n<call>\n[{"id":"c1","name":"team_roster","arguments":{"team_id":"T-42"}}]\n</call>`
const reply = {
  id: "chatcmpl-bench",
  model: "bench-model",
  choices: [{
    message: { role: "assistant", content },
    finish_reason: "stop",
    logprobs: { content: Array.from({ length: 300 }, (_, i) => ({ token: `t${i}`, logprob: -0.01 * (i % 50), bytes: [116], top_logprobs: [] })) }
  }],
  usage: { prompt_tokens: 1500, completion_tokens: 300 }
}
const messages = [
  { role: "system" as const, content: "s".repeat(4_000) },
  { role: "user" as const, content: "Who plays for team T-42?" }
]

const percentile = (xs: ReadonlyArray<number>, p: number): number => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN
}

const program = Effect.gen(function*() {
  const server = yield* LoopbackServer.make({ fallback: Reply.json(reply) })
  const client = yield* Effect.service(OpenAiClient.OpenAiClient).pipe(
    Effect.provide(OpenAiClient.layerFrom({ baseUrl: `${server.url}/v1`, model: "bench-model", apiKey: "sk-bench" }))
  )
  const viaClient = client.chat({ messages, logprobs: true }).pipe(Effect.orDie, Effect.asVoid)
  const viaFetch = Effect.promise(async () => {
    const response = await fetch(`${server.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer sk-bench" },
      body: JSON.stringify({ model: "bench-model", messages, temperature: 0.7, max_tokens: 2048, logprobs: true })
    })
    JSON.parse(await response.text())
  })

  const sequential = (effect: Effect.Effect<void>) =>
    Effect.gen(function*() {
      const times: Array<number> = []
      for (let i = 0; i < N; i++) {
        const start = performance.now()
        yield* effect
        times.push(performance.now() - start)
      }
      return times
    })
  const concurrent = (effect: Effect.Effect<void>) =>
    Effect.gen(function*() {
      const start = performance.now()
      yield* Effect.forEach(Array.from({ length: N }), () => effect, { concurrency: CONCURRENCY, discard: true })
      return N / ((performance.now() - start) / 1000)
    })

  // warm-up, then alternate the two so drift from other load hits both alike
  yield* sequential(viaFetch)
  yield* sequential(viaClient)
  const fetchTimes = [...(yield* sequential(viaFetch)), ...(yield* sequential(viaFetch))]
  const clientTimes = [...(yield* sequential(viaClient)), ...(yield* sequential(viaClient))]
  const fetchRate = yield* concurrent(viaFetch)
  const clientRate = yield* concurrent(viaClient)

  const row = (label: string, times: ReadonlyArray<number>, rate: number) =>
    `${label.padEnd(22)} p50 ${percentile(times, 0.5).toFixed(2).padStart(6)} ms  p95 ${percentile(times, 0.95).toFixed(2).padStart(6)} ms  ${rate.toFixed(0).padStart(5)} req/s at concurrency ${CONCURRENCY}`
  console.log(`OpenAiClient vs bare fetch against a loopback server (${2 * N} sequential requests each, ~${JSON.stringify(reply).length} B replies)`)
  console.log(row("bare fetch+JSON.parse", fetchTimes, fetchRate))
  console.log(row("OpenAiClient.chat", clientTimes, clientRate))
  console.log(
    `ratio client/fetch: p50 ${(percentile(clientTimes, 0.5) / percentile(fetchTimes, 0.5)).toFixed(2)}x, ` +
      `throughput ${(fetchRate / clientRate).toFixed(2)}x`
  )
})

Effect.runPromise(Effect.scoped(program))

/**
 * `npx tsx bench/serve-load.ts`: load on the ToolEnv server (a separate `programs/serve.ts` process on loopback) with
 * autocannon. Each connection loops: create a session, one search round, 4-call rounds up to T_max = 12 (spec Table 6), close it.
 * Prints requests/s, tool calls/s, p50/p99 latency, the server's RSS at the start and after the run, and the same
 * episode loop in-process (Session.step, no HTTP) so the HTTP overhead is a ratio.
 */
import autocannon from "autocannon"
import { Effect } from "effect"
import { Flag } from "effect/cli"
import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import * as App from "../layers/App.ts"
import { callId } from "../src/domain/Ids.ts"
import { repoRoot } from "../src/io/DataPath.ts"
import * as RunConfig from "../src/eval/RunConfig.ts"
import { Retriever } from "../src/retrieval/Retriever.ts"
import * as Session from "../src/runtime/Session.ts"
import { TaskSource } from "../src/toolenv/TaskSource.ts"
import * as BenchFlags from "./BenchFlags.ts"

const flags = await BenchFlags.parse("serve-load", "HTTP load on npm run serve (autocannon) against the in-process Session", {
  requests: RunConfig.intFlag("requests", { minimum: 1000, maximum: 10_000_000 }, "requests to send").pipe(Flag.withDefault(100_000)),
  connections: RunConfig.intFlag("connections", { minimum: 1, maximum: 1024 }, "concurrent connections (sessions in flight)").pipe(Flag.withDefault(32)),
  worldSize: RunConfig.flags.worldSize.pipe(Flag.withDefault(5000)),
  seconds: RunConfig.intFlag("seconds", { minimum: 1, maximum: 3600 }, "in-process measurement time").pipe(Flag.withDefault(10))
})

const rounds = 12
const slots = [{ slot: "s1", query: "weather forecast" }, { slot: "s2", query: "currency exchange rate" }]

/** The 4 tools the search round retrieves (top 2 of each slot, as the session's top-3 search lists them). */
const tools = await Effect.runPromise(Effect.gen(function*() {
  const retriever = yield* Retriever
  const lists = yield* retriever.search(slots.map((s) => s.query), 3)
  return lists.flatMap((l) => l.slice(0, 2).map((h) => h.tool))
}).pipe(Effect.provide(App.layer({ world: { size: flags.worldSize } })), Effect.orDie))

const callTurn = (round: number) => ({
  turn: { searches: [], calls: tools.map((tool, j) => ({ id: callId(`c${round * 4 + j + 1}`), tool, arguments: {} })) }
})

// ---- in-process: the same loop on Session directly ----
const inProcess = await Effect.runPromise(Effect.gen(function*() {
  const source = yield* TaskSource
  const [task] = yield* source.sample({ split: "test", count: 1 })
  const usage = { promptTokens: 0, completionTokens: 0 }
  const search = { text: "", turn: { searches: slots, calls: [] }, usage }
  const calls = Array.from({ length: rounds }, (_, r) => ({ text: "", turn: callTurn(r).turn, usage }))
  let steps = 0
  let toolCalls = 0
  const started = performance.now()
  while (performance.now() - started < flags.seconds * 1000) {
    const session = yield* Session.open({ task: task!, paradigm: "ParaAct", seed: steps, policy: "bench" }, { maxRounds: rounds })
    yield* session.step(search)
    steps++
    for (let r = 1; r < rounds; r++) {
      const step = yield* session.step(calls[r]!)
      steps++
      toolCalls += step.observations.filter((o) => o.attempts > 0).length
    }
  }
  const s = (performance.now() - started) / 1000
  return { stepsPerS: steps / s, callsPerS: toolCalls / s }
}).pipe(Effect.provide(App.layer({ world: { size: flags.worldSize } })), Effect.orDie))

// ---- the server, in its own process ----
const server = spawn(process.execPath, ["--import", "tsx", "programs/serve.ts", "--port", "0", "--world-size", String(flags.worldSize), "--session-ttl", "30"], { cwd: repoRoot, stdio: ["ignore", "pipe", "inherit"] })
const url = await new Promise<string>((resolve, reject) => {
  let out = ""
  server.stdout.setEncoding("utf8").on("data", (c: string) => {
    out += c
    const m = /listening on (http:\/\/\S+)/.exec(out)
    if (m !== null) resolve(m[1]!)
  })
  server.on("exit", (code) => reject(new Error(`server exited with ${code}`)))
})
const rssMb = (): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server.pid}/status`, "utf8"))?.[1] ?? 0) / 1024

// one client key for the whole load (sessions belong to the key that opened them)
const json = { "content-type": "application/json", "x-client-key": "serve-load-bench-client-key" }
type Ctx = Record<string, unknown>
const requests: Array<autocannon.Request> = [
  {
    method: "POST", path: "/sessions", headers: json, body: JSON.stringify({ seed: 1, maxRounds: rounds }),
    onResponse: (_status: number, body: string, context: Ctx) => {
      context["sid"] = (JSON.parse(body) as { sessionId: string }).sessionId
    }
  },
  { method: "POST", headers: json, setupRequest: (req: Readonly<Record<string, unknown>>, context: Ctx) => ({ ...req, path: `/sessions/${String(context["sid"])}/step`, body: JSON.stringify({ turn: { searches: slots, calls: [] } }) }) },
  ...Array.from({ length: rounds - 1 }, (_, r): autocannon.Request => ({
    method: "POST", headers: json,
    setupRequest: (req: Readonly<Record<string, unknown>>, context: Ctx) => ({ ...req, path: `/sessions/${String(context["sid"])}/step`, body: JSON.stringify(callTurn(r + 1)) })
  })),
  { method: "DELETE", headers: { "x-client-key": json["x-client-key"] }, setupRequest: (req: Readonly<Record<string, unknown>>, context: Ctx) => ({ ...req, path: `/sessions/${String(context["sid"])}` }) }
]

// warm-up (JIT, the engine's compiled tools), then the measured run
await autocannon({ url, connections: flags.connections, amount: 5000, requests })
const rssStart = rssMb()
const result = await autocannon({ url, connections: flags.connections, amount: flags.requests, requests })
const rssEnd = rssMb()
const metrics = await (await fetch(`${url}/metrics`)).text()
server.kill("SIGTERM")

const stepShare = rounds / (rounds + 2)
const callShare = ((rounds - 1) * 4) / (rounds + 2)
const rps = result.requests.average
const open = /toolenv_sessions_open (\d+)/.exec(metrics)?.[1]
console.log(`serve-load: ${result.requests.total.toLocaleString("en-US")} requests, ${flags.connections} connections, world ${flags.worldSize} tools, ${(result.duration).toFixed(1)} s`)
console.log(`  non-2xx ${result.non2xx}, errors ${result.errors}, timeouts ${result.timeouts}; sessions in memory at the end: ${open}`)
console.log(`  HTTP        ${rps.toFixed(0)} req/s = ${(rps * stepShare).toFixed(0)} steps/s = ${(rps * callShare).toFixed(0)} tool calls/s; latency p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms`)
console.log(`  in-process  ${inProcess.stepsPerS.toFixed(0)} steps/s = ${inProcess.callsPerS.toFixed(0)} tool calls/s (Session.step, no HTTP)`)
console.log(`  ratio HTTP / in-process steps: ${((rps * stepShare) / inProcess.stepsPerS).toFixed(3)}`)
console.log(`  server RSS: ${rssStart.toFixed(0)} MB after warm-up, ${rssEnd.toFixed(0)} MB after ${result.requests.total.toLocaleString("en-US")} requests`)
process.exit(0)

/**
 * `npx tsx bench/serve-stall.ts`: does one client's most expensive requests stall every other client? A ToolEnv server
 * (a separate `programs/serve.ts` process on loopback, the default 50,011-tool world) is polled on `/health` by a
 * client of its own (a worker thread, so the poller's timing is not the hostile client's JSON work) while another
 * client sends, one after another, the most expensive requests the server allows: a group of 64 trajectories to
 * score, 64-action turns and 64k-character turns, long retrieval queries at k = 100, the largest posted task, a
 * finished episode's score, 100-task listings and far task draws under new seeds (`index` 9,999: 10,000 draws).
 * `--parallel` keeps every kind in flight at once (one loop per kind: a harsher client). The poll's latency is printed
 * side by side with the same poll on the idle server (same run); the target is a p99 ≤ 100 ms under load;
 * `--per-kind <s>` then runs each kind alone. `--json` ends with one line of the numbers.
 */
import { Flag } from "effect/cli"
import { spawn } from "node:child_process"
import { Worker } from "node:worker_threads"
import { repoRoot } from "../src/io/DataPath.ts"
import * as RunConfig from "../src/eval/RunConfig.ts"
import { limits, maxTaskIndex } from "../src/service/Api.ts"
import * as BenchFlags from "./BenchFlags.ts"

const flags = await BenchFlags.parse("serve-stall", "/health latency while another client sends the most expensive allowed requests", {
  seconds: RunConfig.intFlag("seconds", { minimum: 2, maximum: 3600 }, "seconds of each phase (idle, then under load)").pipe(Flag.withDefault(60)),
  parallel: Flag.Boolean("parallel").pipe(Flag.withDescription("every kind of request in flight at once (one loop per kind), not one after another"), Flag.withDefault(false)),
  pollMs: RunConfig.intFlag("poll-ms", { minimum: 1, maximum: 10_000 }, "the health poller's interval").pipe(Flag.withDefault(20)),
  worldSize: RunConfig.flags.worldSize.pipe(Flag.withDefault(50_011)),
  perKind: RunConfig.intFlag("per-kind", { minimum: 0, maximum: 3600 }, "then each kind of request alone for this many seconds (0: skip), to see which stalls").pipe(Flag.withDefault(0)),
  json: Flag.Boolean("json").pipe(Flag.withDescription("end with one JSON line of the numbers"), Flag.withDefault(false))
})

// ---- the server ----
const server = spawn(process.execPath, ["--import", "tsx", "programs/serve.ts", "--port", "0", "--world-size", String(flags.worldSize)], { cwd: repoRoot, stdio: ["ignore", "pipe", "inherit"] })
const url = await new Promise<string>((resolve, reject) => {
  let out = ""
  server.stdout.setEncoding("utf8").on("data", (c: string) => {
    out += c
    const m = /listening on (http:\/\/\S+)/.exec(out)
    if (m !== null) resolve(m[1]!)
  })
  server.on("exit", (code) => reject(new Error(`server exited with ${code}`)))
})

// ---- the poller: a worker thread timing GET /health every pollMs until told to stop ----
const pollerSource = `
const { parentPort, workerData } = require("node:worker_threads")
const http = require("node:http")
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
let stop = false
parentPort.on("message", () => { stop = true })
const times = []
const once = () => new Promise((resolve) => {
  const start = performance.now()
  http.get(workerData.url + "/health", { agent }, (res) => {
    res.resume()
    res.on("end", () => resolve(res.statusCode === 200 ? performance.now() - start : -1))
  }).on("error", () => resolve(-1))
})
;(async () => {
  while (!stop) {
    const started = performance.now()
    times.push(await once())
    const wait = workerData.pollMs - (performance.now() - started)
    if (wait > 0) await new Promise((r) => setTimeout(r, wait))
  }
  parentPort.postMessage(times)
})()
`
const poll = (seconds: number, during: () => Promise<void>): Promise<{ readonly times: ReadonlyArray<number> }> =>
  new Promise((resolve, reject) => {
    const worker = new Worker(pollerSource, { eval: true, workerData: { url, pollMs: flags.pollMs } })
    worker.on("message", (times: Array<number>) => {
      void worker.terminate()
      resolve({ times })
    })
    worker.on("error", reject)
    const until = Date.now() + seconds * 1000
    void during().then(() => new Promise((r) => setTimeout(r, Math.max(0, until - Date.now())))).then(() => worker.postMessage("stop"))
  })

// ---- the hostile client ----
const key = "serve-stall-bench-client-key"
const headers = { "content-type": "application/json", "x-client-key": key }
const send = async (method: string, path: string, body?: unknown): Promise<{ status: number; text: string }> => {
  const res = await fetch(url + path, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) })
  return { status: res.status, text: await res.text() }
}

// the material of the expensive requests: real tools, a finished episode's trajectory
const toolNames = (JSON.parse((await send("POST", "/tools/search", { query: "weather forecast currency exchange sentiment", k: 32 })).text) as { hits: Array<{ tool: string }> }).hits.map((h) => h.tool)
const finished = JSON.parse((await send("POST", "/sessions", { split: "test", level: "I3", index: 0 })).text) as { sessionId: string; taskId: string }
for (let r = 0; r < 11; r++) {
  await send("POST", `/sessions/${finished.sessionId}/step`, { turn: { searches: toolNames.slice(0, 8).map((t, i) => ({ slot: `s${i}`, query: t.replace(/_/g, " ") })), calls: toolNames.slice(0, 16).map((tool, j) => ({ id: `c${r * 16 + j + 1}`, tool, arguments: { query: "Paris", amount: 20, text: "the report looks promising" } })) } })
}
await send("POST", `/sessions/${finished.sessionId}/step`, { text: "<answer>done</answer>" })
const trajectory = JSON.parse((await send("GET", `/sessions/${finished.sessionId}/trajectory`)).text) as { id: string }
const trajectoryBytes = JSON.stringify(trajectory).length
const groupSize = Math.max(2, Math.min(limits.groupSize, Math.floor((1024 * 1024 * 0.95) / trajectoryBytes)))
const group = Array.from({ length: groupSize }, (_, i) => ({ ...trajectory, id: `${trajectory.id}-${i}` }))
const longQuery = "weather forecast for the city with hourly temperature and currency exchange rates ".repeat(30).slice(0, limits.queryChars)
const bigArgs = "a".repeat(Math.floor(limits.turnBytes / 70))
const bigTask = (i: number) => ({ id: `stall-${i}`, request: "r".repeat(20_000), gold: Array.from({ length: 2 }, (_, j) => ({ id: `c${j + 1}`, tool: toolNames[j]!, arguments: { text: "x".repeat(Math.floor(limits.taskBytes / 2.2) - 12_000) }, deps: [] })) })
const longText = `<think>${"I will search for the tools and then call them in parallel. ".repeat(1000)}</think>`.slice(0, 65_000) + "<answer>x</answer>"

let seed = 1000
const kinds: ReadonlyArray<readonly [string, () => Promise<unknown>]> = [
  [`POST /advantages (${groupSize} trajectories, ${Math.round(groupSize * trajectoryBytes / 1024)} KiB)`, () => send("POST", "/advantages", { taskId: finished.taskId, trajectories: group, estimator: "grpo" })],
  ["step: 32 searches + 32 calls, big arguments", async () => {
    const r = await send("POST", "/sessions", { split: "test", level: "I2", index: 0, seed: ++seed })
    const id = (JSON.parse(r.text) as { sessionId: string }).sessionId
    await send("POST", `/sessions/${id}/step`, {
      turn: {
        searches: Array.from({ length: 32 }, (_, i) => ({ slot: `s${i}`, query: longQuery.slice(i, 500 + i) })),
        calls: Array.from({ length: 32 }, (_, j) => ({ id: `c${j + 1}`, tool: toolNames[j % toolNames.length]!, arguments: { text: bigArgs, n: j } }))
      }
    })
    await send("POST", `/sessions/${id}/step`, { text: longText })
    await send("DELETE", `/sessions/${id}`)
  }],
  ["POST /tools/search (2,000 chars, k=100)", () => send("POST", "/tools/search", { query: longQuery, k: 100 })],
  ["POST /tasks (the largest allowed)", () => send("POST", "/tasks", bigTask(++seed))],
  ["POST /sessions/{id}/score (12 rounds)", () => send("POST", `/sessions/${finished.sessionId}/score`)],
  ["GET /tasks?count=100&seed=<new>&gold=true", () => send("GET", `/tasks?split=train&count=100&seed=${++seed}&gold=true`)],
  ["GET /tasks/gen-<new seed>-train-I2-9999", () => send("GET", `/tasks/gen-${++seed}-train-I2-${maxTaskIndex}?gold=true`)],
  ["POST /sessions {index 9999, new taskSeed}", async () => {
    const r = await send("POST", "/sessions", { split: "train", level: "I2", index: maxTaskIndex, taskSeed: ++seed })
    const id = (JSON.parse(r.text) as { sessionId?: string }).sessionId
    if (id !== undefined) await send("DELETE", `/sessions/${id}`)
  }]
]
const spent = new Map<string, Array<number>>(kinds.map(([name]) => [name, []]))
const statuses = new Map<number, number>()
let stopHostile = false
const timed = async (name: string, run: () => Promise<unknown>): Promise<void> => {
  const started = performance.now()
  const r = await run()
  spent.get(name)!.push(performance.now() - started)
  const status = (r as { status?: number } | undefined)?.status
  if (status !== undefined) statuses.set(status, (statuses.get(status) ?? 0) + 1)
}
// one client, one request after another (the kinds in turn); --parallel: one loop per kind, all in flight at once
const hostile = async (): Promise<void> => {
  if (flags.parallel) {
    await Promise.all(kinds.map(async ([name, run]) => {
      while (!stopHostile) await timed(name, run)
    }))
    return
  }
  for (let i = 0; !stopHostile; i++) {
    const [name, run] = kinds[i % kinds.length]!
    await timed(name, run)
  }
}

const quantile = (xs: ReadonlyArray<number>, q: number): number => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN
}
const summary = (times: ReadonlyArray<number>) => {
  const ok = times.filter((t) => t >= 0)
  return { polls: times.length, failed: times.length - ok.length, p50: quantile(ok, 0.5), p99: quantile(ok, 0.99), max: Math.max(...ok) }
}

const idle = summary((await poll(flags.seconds, async () => {})).times)
let hostileDone: Promise<void> = Promise.resolve()
const loaded = summary((await poll(flags.seconds, async () => {
  hostileDone = hostile()
})).times)
stopHostile = true
await hostileDone

// each kind alone (a diagnosis: which request holds the server's thread)
const perKind: Array<{ readonly name: string; readonly requests: number; readonly health: ReturnType<typeof summary> }> = []
if (flags.perKind > 0) {
  for (const [name, run] of kinds) {
    let stop = false
    let requests = 0
    let loop: Promise<void> = Promise.resolve()
    const health = summary((await poll(flags.perKind, async () => {
      loop = (async () => {
        while (!stop) {
          await run()
          requests++
        }
      })()
    })).times)
    stop = true
    await loop
    perKind.push({ name, requests, health })
  }
}
server.kill("SIGTERM")

const f = (x: number) => x.toFixed(1).padStart(7)
console.log(`serve-stall: /health polled every ${flags.pollMs} ms for ${flags.seconds} s idle, then ${flags.seconds} s while one client sends the most expensive allowed requests ${flags.parallel ? "all at once (--parallel)" : "one after another"} (world ${flags.worldSize} tools)`)
console.log(`                      polls  failed     p50 ms     p99 ms     max ms`)
console.log(`  idle server      ${String(idle.polls).padStart(8)} ${String(idle.failed).padStart(7)}    ${f(idle.p50)}    ${f(idle.p99)}    ${f(idle.max)}`)
console.log(`  under load       ${String(loaded.polls).padStart(8)} ${String(loaded.failed).padStart(7)}    ${f(loaded.p50)}    ${f(loaded.p99)}    ${f(loaded.max)}`)
console.log(`  target p99 ≤ 100 ms under load: ${loaded.p99 <= 100 ? "met" : "MISSED"} (${loaded.p99.toFixed(1)} ms; ratio to idle ${(loaded.p99 / idle.p99).toFixed(2)})`)
console.log(`  the hostile client's requests (time each took, as it saw it): answers ${[...statuses].map(([s, n]) => `${s}×${n}`).join(", ")}`)
for (const [name, times] of spent) {
  if (times.length > 0) console.log(`    ${name.padEnd(46)} ×${String(times.length).padStart(3)}  mean ${f(times.reduce((a, b) => a + b, 0) / times.length)} ms  max ${f(Math.max(...times))} ms`)
}
if (perKind.length > 0) {
  console.log(`  each kind alone, ${flags.perKind} s each (/health p99 / max while it runs):`)
  for (const k of perKind) console.log(`    ${k.name.padEnd(46)} ×${String(k.requests).padStart(3)}  health p99 ${f(k.health.p99)} ms  max ${f(k.health.max)} ms`)
}
if (flags.json) {
  console.log(JSON.stringify({ idle, loaded, met: loaded.p99 <= 100, requests: Object.fromEntries([...spent].map(([k, v]) => [k, { count: v.length, meanMs: v.reduce((a, b) => a + b, 0) / Math.max(1, v.length), maxMs: Math.max(0, ...v) }])) }))
}
process.exit(0)

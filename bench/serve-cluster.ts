/**
 * A load the size of a real RL job on ToolEnv servers (loopback only): B prompts × G rollouts (default 512 × 8 = 4,096
 * episodes) opened at once and stepped to the end concurrently, each episode the gold solution of a training task
 * (search every gold tool, the gold calls layer by layer, the answer) at its own seed, through
 *   memory_1   one `npm run serve` process on the in-memory store;
 *   postgres_2 two `npm run serve` replicas on one PostgreSQL, the client balancing by session id (what a consistent-
 *              hash balancer does; `--balance round-robin` sends each request to the next replica instead);
 *   workers_2  one `npm run serve -- --workers 2` on the same PostgreSQL;
 *   kill       the postgres_2 setting again, replica B killed with SIGKILL when half the steps are done: the client
 *              sends B's requests to the survivor (the same `round`, so a retry cannot become a second turn).
 * Printed side by side: tool calls/s, step p50/p99 (client-measured, from send to answer), server RSS per 1k open
 * sessions, PostgreSQL rows written per step, CPU milliseconds per step of the servers, PostgreSQL (when it runs on this
 * machine) and this client (on a shared machine the CPU says what the wall clock cannot); every run is checked against the log (each episode's stored turns are
 * exactly its script: lost and duplicated turns counted) and its trajectories against the memory_1 run's (timing
 * aside). `--pg <url>` names the database (the bench makes and drops its own schemas); without it a scratch PostgreSQL
 * is started (test/support/Postgres.ts). `--json` ends with one JSON line.
 *
 * `--diagnose` adds memory_2 (two replicas on memory stores of their own: two processes, no log) and postgres_1 (one
 * replica on PostgreSQL: the log, no second process).
 *
 *   npx tsx bench/serve-cluster.ts [--episodes 4096] [--group 8] [--pg postgres://…] [--diagnose] [--json]
 */
import { Effect } from "effect"
import { Flag } from "effect/cli"
import { spawn } from "node:child_process"
import type { ChildProcess } from "node:child_process"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as http from "node:http"
import * as App from "../layers/App.ts"
import type { Task } from "../src/domain/Task.ts"
import * as RunConfig from "../src/eval/RunConfig.ts"
import { repoRoot } from "../src/io/DataPath.ts"
import { canonicalJson } from "../src/math/CanonicalJson.ts"
import * as ParaAct from "../src/protocol/ParaAct.ts"
import type { StepRequest } from "../src/service/Api.ts"
import { TaskSource } from "../src/toolenv/TaskSource.ts"
import * as Postgres from "../test/support/Postgres.ts"
import { goldRounds, timeless } from "../test/support/ServedEpisode.ts"
import * as BenchFlags from "./BenchFlags.ts"

const flags = await BenchFlags.parse("serve-cluster", "B×G episodes at once through 1 replica (memory), 2 replicas on PostgreSQL, --workers 2, and a kill -9 of a replica", {
  episodes: RunConfig.intFlag("episodes", { minimum: 8, maximum: 65_536 }, "episodes opened at once (B × G)").pipe(Flag.withDefault(4096)),
  group: RunConfig.intFlag("group", { minimum: 1, maximum: 64 }, "G: rollouts per prompt (each at its own seed)").pipe(Flag.withDefault(8)),
  worldSize: RunConfig.flags.worldSize.pipe(Flag.withDefault(2000)),
  inFlight: RunConfig.intFlag("in-flight", { minimum: 1, maximum: 4096 }, "requests in flight at once (the trainer's HTTP pool)").pipe(Flag.withDefault(256)),
  pg: Flag.String("pg").pipe(Flag.withDescription("PostgreSQL URL (the bench makes its own schemas); default: a scratch cluster"), Flag.optional),
  balance: Flag.Literals("balance", ["session", "round-robin"]).pipe(Flag.withDescription("how the client spreads requests over the replicas"), Flag.withDefault("session")),
  diagnose: Flag.Boolean("diagnose").pipe(Flag.withDescription("add memory_2 (two replicas, each on its own memory store, balanced by session) and postgres_1 (one replica on PostgreSQL): what two processes cost apart from the log, and what the log costs apart from a second process"), Flag.withDefault(false)),
  skipKill: Flag.Boolean("skip-kill").pipe(Flag.withDescription("leave out the kill -9 run"), Flag.withDefault(false)),
  json: Flag.Boolean("json").pipe(Flag.withDescription("end with one JSON line"), Flag.withDefault(false))
})

const B = Math.ceil(flags.episodes / flags.group)
const key = "serve-cluster-bench-client-key"

// ---- the episodes: B training tasks × G seeds, each the gold solution ----
const tasks: ReadonlyArray<Task> = await Effect.runPromise(Effect.gen(function*() {
  const source = yield* TaskSource
  return yield* source.sample({ split: "train", count: B })
}).pipe(Effect.provide(App.layer({ world: { size: flags.worldSize }, tasks: { holdoutTools: true } }))))

interface Episode {
  readonly task: Task
  readonly seed: number
  readonly rounds: ReadonlyArray<StepRequest>
}
const episodes: ReadonlyArray<Episode> = Array.from({ length: flags.episodes }, (_, i) => {
  const task = tasks[Math.floor(i / flags.group) % tasks.length] as Task
  // the turn's text is its canonical ParaAct print, so the log can be checked turn by turn
  const rounds = goldRounds(task).map((r) => ({ text: ParaAct.printTurn(r.turn!), turn: r.turn! }))
  return { task, seed: i % flags.group, rounds }
})

// ---- processes ----
interface Server {
  readonly child: ChildProcess
  readonly url: string
  readonly port: number
}

/** Every server started, killed when the bench ends however it ends (no orphan keeps a port and its memory). */
const children = new Set<ChildProcess>()
process.on("exit", () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
})

const start = (args: ReadonlyArray<string>): Promise<Server> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "programs/serve.ts", "--port", "0", "--world-size", String(flags.worldSize), "--max-sessions", String(flags.episodes * 2), "--fault-rate", "0.05", ...args], {
      cwd: repoRoot,
      stdio: ["ignore", "pipe", "pipe"]
    })
    children.add(child)
    let out = ""
    let err = ""
    child.stdout!.setEncoding("utf8").on("data", (c: string) => {
      out += c
      const m = /toolenv listening on (http:\/\/127\.0\.0\.1:(\d+))/.exec(out)
      if (m !== null) resolve({ child, url: m[1] as string, port: Number(m[2]) })
    })
    child.stderr!.setEncoding("utf8").on("data", (c: string) => void (err += c))
    child.on("exit", (code) => reject(new Error(`serve exited with ${code}: ${err.slice(0, 500)}`)))
  })

const stop = (server: Server): Promise<void> =>
  new Promise((resolve) => {
    if (server.child.exitCode !== null || server.child.signalCode !== null) return resolve()
    server.child.once("exit", () => resolve())
    server.child.kill("SIGTERM")
  })

/** Resident memory (bytes) of a process and its children (the workers of a primary). */
const rssOf = (pid: number): number => {
  const read = (p: number): number => {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${p}/status`, "utf8"))
      return m === null ? 0 : Number(m[1]) * 1024
    } catch {
      return 0
    }
  }
  let total = read(pid)
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8")
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
      if (ppid === pid) total += read(Number(entry))
    } catch {
      // gone
    }
  }
  return total
}

/** CPU seconds (user + system) of a process and all its descendants, from /proc (0 for what is gone). */
const cpuOf = (root: number): number => {
  const children = new Map<number, Array<number>>()
  const own = new Map<number, number>()
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8")
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      const pid = Number(entry)
      const ppid = Number(fields[1])
      own.set(pid, (Number(fields[11]) + Number(fields[12])) / 100)
      const list = children.get(ppid) ?? []
      list.push(pid)
      children.set(ppid, list)
    } catch {
      // gone
    }
  }
  let total = 0
  const stack = [root]
  while (stack.length > 0) {
    const pid = stack.pop() as number
    total += own.get(pid) ?? 0
    stack.push(...(children.get(pid) ?? []))
  }
  return total
}

// ---- the client ----
/** A request that got no answer; `refused` when nothing listens there any more (a dead replica). */
class Down extends Error {
  constructor(message: string, readonly refused: boolean) {
    super(message)
  }
}

interface Answer {
  readonly status: number
  readonly json: any
}

/** A semaphore for the requests in flight: the latency of a request is measured from when it is sent. */
let inFlight = 0
const queue: Array<() => void> = []
const acquire = (): Promise<void> => (inFlight < flags.inFlight ? (inFlight++, Promise.resolve()) : new Promise((resolve) => queue.push(resolve)))
const release = () => {
  const next = queue.shift()
  if (next === undefined) inFlight--
  else next()
}

const agents = new Map<string, http.Agent>()
const send = async (base: string, method: string, pathname: string, body?: unknown): Promise<Answer & { readonly ms: number }> => {
  await acquire()
  const started = performance.now()
  try {
    return await new Promise((resolve, reject) => {
      let agent = agents.get(base)
      if (agent === undefined) agents.set(base, agent = new http.Agent({ keepAlive: true, maxSockets: flags.inFlight }))
      const text = body === undefined ? undefined : JSON.stringify(body)
      const u = new URL(base)
      const r = http.request({ host: u.hostname, port: Number(u.port), path: pathname, method, agent, headers: { "x-client-key": key, ...(text !== undefined ? { "content-type": "application/json", "content-length": Buffer.byteLength(text) } : {}) } }, (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (c: Buffer) => chunks.push(c))
        res.on("end", () => {
          const raw = Buffer.concat(chunks).toString("utf8")
          let json: unknown
          try {
            json = JSON.parse(raw)
          } catch {
            json = raw
          }
          resolve({ status: res.statusCode ?? 0, json, ms: performance.now() - started })
        })
        res.on("error", (e) => reject(new Down(e.message, false)))
      })
      r.on("error", (e: NodeJS.ErrnoException) => reject(new Down(e.message, e.code === "ECONNREFUSED")))
      r.end(text)
    })
  } finally {
    release()
  }
}

const percentile = (sorted: ReadonlyArray<number>, p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0

interface RunResult {
  readonly name: string
  readonly completed: number
  readonly steps: number
  readonly toolCalls: number
  readonly seconds: number
  readonly p50: number
  readonly p99: number
  readonly errors5xx: number
  readonly rssPer1k: number
  readonly sessionIds: ReadonlyArray<string>
  readonly trajectories: ReadonlyArray<string>
  readonly failures: ReadonlyArray<string>
  /** CPU milliseconds per step during the step phase: the server processes, PostgreSQL (when local), this client. */
  readonly cpuPerStep: { readonly server: number; readonly postgres: number | undefined; readonly client: number }
}

/**
 * Opens every episode, steps them all to the end concurrently (each a chain of rounds), reads every trajectory.
 * `route(i, attempt)` picks the replica of a request of episode i; `onProgress` sees the steps done so far.
 */
const run = async (
  name: string,
  bases: ReadonlyArray<string>,
  pids: ReadonlyArray<number>,
  options: { readonly onProgress?: (done: number, total: number) => void; readonly onStepsStart?: () => Promise<void> } = {}
): Promise<RunResult> => {
  const alive = bases.map(() => true)
  let rr = 0
  const pick = (i: number): string => {
    const live = bases.filter((_, k) => alive[k])
    if (live.length === 0) throw new Error("no replica is alive")
    const index = flags.balance === "round-robin" ? rr++ : i
    return live[index % live.length] as string
  }
  /** A request to the episode's replica; a replica that is down is marked and the request goes to another. */
  const call = async (i: number, method: string, pathname: string, body?: unknown): Promise<Answer & { ms: number }> => {
    for (let attempt = 0; attempt < 8; attempt++) {
      const base = pick(i)
      try {
        return await send(base, method, pathname, body)
      } catch (e) {
        if (!(e instanceof Down)) throw e
        // refused: the replica is gone; reset (a keep-alive socket closed under the request, a replica dying): again
        if (e.refused) alive[bases.indexOf(base)] = false
        else await new Promise((resolve) => setTimeout(resolve, 50 * (attempt + 1)))
      }
    }
    throw new Error(`episode ${i}: no replica answered ${method} ${pathname}`)
  }
  const rssBefore = pids.reduce((s, p) => s + rssOf(p), 0)
  let errors5xx = 0
  const failures: Array<string> = []
  const ids: Array<string> = []
  await Promise.all(episodes.map(async (e, i) => {
    const created = await call(i, "POST", "/sessions", { taskId: e.task.id, seed: e.seed, faultRate: 0.05 })
    if (created.status >= 500) errors5xx++
    if (created.status !== 200) failures.push(`create ${i}: ${created.status} ${JSON.stringify(created.json).slice(0, 200)}`)
    ids[i] = created.json.sessionId
  }))
  await options.onStepsStart?.()
  const total = episodes.reduce((s, e) => s + e.rounds.length, 0)
  const latencies: Array<number> = []
  let toolCalls = 0
  let done = 0
  let completed = 0
  const cpuBefore = { server: pids.reduce((s, p) => s + cpuOf(p), 0), postgres: pgPid === undefined ? undefined : cpuOf(pgPid), client: process.cpuUsage() }
  const started = performance.now()
  await Promise.all(episodes.map(async (e, i) => {
    const id = ids[i]
    if (id === undefined) return
    for (const [round, request] of e.rounds.entries()) {
      const r = await call(i, "POST", `/sessions/${id}/step`, { ...request, round })
      done++
      options.onProgress?.(done, total)
      if (r.status >= 500) errors5xx++
      if (r.status === 200) {
        latencies.push(r.ms)
        toolCalls += r.json.step.observations.length
        if (r.json.done === true) {
          completed++
          return
        }
      } else if (r.status === 409 && r.json.rounds === round + 1) {
        // accepted by a replica that died before it answered: the log has it, the episode goes on
        if (round === e.rounds.length - 1) completed++
      } else {
        failures.push(`step ${i}/${round}: ${r.status} ${JSON.stringify(r.json).slice(0, 200)}`)
        return
      }
    }
  }))
  const seconds = (performance.now() - started) / 1000
  const perStep = (cpuSeconds: number) => (1000 * cpuSeconds) / Math.max(1, latencies.length)
  const clientUsage = process.cpuUsage(cpuBefore.client)
  const cpuPerStep = {
    server: perStep(pids.reduce((s, p) => s + cpuOf(p), 0) - cpuBefore.server),
    postgres: pgPid === undefined || cpuBefore.postgres === undefined ? undefined : perStep(cpuOf(pgPid) - cpuBefore.postgres),
    client: perStep((clientUsage.user + clientUsage.system) / 1e6)
  }
  const rssAfter = pids.reduce((s, p) => s + rssOf(p), 0)
  const trajectories: Array<string> = []
  await Promise.all(ids.map(async (id, i) => {
    const t = await call(i, "GET", `/sessions/${id}/trajectory`)
    trajectories[i] = t.status === 200 ? createHash("sha256").update(canonicalJson(JSON.parse(timeless({ ...t.json, id: "" })))).digest("hex") : `status ${t.status}`
  }))
  latencies.sort((a, b) => a - b)
  return {
    name,
    completed,
    steps: latencies.length,
    toolCalls,
    seconds,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    errors5xx,
    rssPer1k: (rssAfter - rssBefore) / (flags.episodes / 1000),
    sessionIds: ids,
    trajectories,
    failures,
    cpuPerStep
  }
}

/** Each episode's turns in the log against its script: stored turns that are not the script's next are lost or extra. */
const checkLog = (url: string, schema: string, ids: ReadonlyArray<string>) => {
  const rows = Postgres.runSql(url, `SELECT s.id, t.idx, md5(t.body) FROM "${schema}".sessions s JOIN "${schema}".turns t USING (incarnation) WHERE s.closed_at IS NULL ORDER BY s.id, t.idx`)
  const stored = new Map<string, Array<string>>()
  for (const line of rows.split("\n")) {
    if (line === "") continue
    const [id, , digest] = line.split("|")
    const list = stored.get(id as string) ?? []
    list.push(digest as string)
    stored.set(id as string, list)
  }
  let lost = 0
  let duplicated = 0
  for (const [i, id] of ids.entries()) {
    const script = (episodes[i] as Episode).rounds.map((r) => createHash("md5").update(JSON.stringify({ text: r.text, turn: r.turn, usage: { promptTokens: 0, completionTokens: 0 } })).digest("hex"))
    const have = stored.get(id) ?? []
    let k = 0
    while (k < Math.min(have.length, script.length) && have[k] === script[k]) k++
    lost += script.length - k
    duplicated += have.length - k
  }
  return { lost, duplicated }
}

/** Rows written by statements on the schema's tables (inserts, updates, deletes) as PostgreSQL counts them. */
const rowsWritten = (url: string, schema: string): number => {
  const out = Postgres.runSql(url, `SELECT pg_stat_clear_snapshot(); SELECT coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0) FROM pg_stat_user_tables WHERE schemaname = '${schema}'`)
  return Number(out.trim().split("\n").pop())
}

// ---- PostgreSQL ----
const pg: Postgres.Available = flags.pg._tag === "Some" ? { url: flags.pg.value, stop: () => {} } : Postgres.available()
if (pg.url === undefined) {
  console.error(`bench/serve-cluster: ${pg.reason}`)
  process.exit(1)
}
const pgUrl = pg.url
/** The postmaster's pid when the database runs on this machine (its data folder readable here): its CPU is counted. */
const pgPid: number | undefined = (() => {
  try {
    const dir = Postgres.runSql(pgUrl, "SHOW data_directory").trim()
    const pid = Number(fs.readFileSync(`${dir}/postmaster.pid`, "utf8").split("\n")[0])
    return Number.isInteger(pid) && pid > 0 && fs.existsSync(`/proc/${pid}`) ? pid : undefined
  } catch {
    return undefined
  }
})()
const schemas: Array<string> = []
const schemaFor = (what: string) => {
  const s = Postgres.freshSchema(`bench_${what}`)
  schemas.push(s)
  return s
}
const waitStats = () => new Promise((resolve) => setTimeout(resolve, 1500))

console.log(`bench/serve-cluster: ${flags.episodes} episodes (B = ${B} × G = ${flags.group}), ${episodes.reduce((s, e) => s + e.rounds.length, 0)} steps per run, world of ${flags.worldSize} tools, ${flags.inFlight} requests in flight, balance by ${flags.balance}; load average ${fs.readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`)

type Measured = RunResult & { readonly rowsPerStep?: number; readonly lost: number; readonly duplicated: number }
/** Each run's results, printed as soon as the run ends (a later failure does not lose them). */
const results: Record<string, Measured> = new Proxy({} as Record<string, Measured>, {
  set: (target, name: string, r: Measured) => {
    target[name] = r
    console.log(`${name}: ${r.completed}/${flags.episodes} completed, ${r.steps} steps in ${r.seconds.toFixed(1)} s, ${Math.round(r.toolCalls / r.seconds)} tool calls/s, p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, RSS +${(r.rssPer1k / 1024 / 1024).toFixed(1)} MB per 1k sessions, rows/step ${r.rowsPerStep?.toFixed(2) ?? "—"}, CPU ms/step server ${r.cpuPerStep.server.toFixed(2)} postgres ${r.cpuPerStep.postgres?.toFixed(2) ?? "—"} client ${r.cpuPerStep.client.toFixed(2)}, lost ${r.lost}, duplicated ${r.duplicated}, 5xx ${r.errors5xx}`)
    return true
  }
})
try {
  {
    const server = await start([])
    const r = await run("memory_1", [server.url], [server.child.pid as number])
    await stop(server)
    results["memory_1"] = { ...r, lost: r.trajectories.filter((t) => t.startsWith("status")).length, duplicated: 0 }
  }
  {
    const schema = schemaFor("pg2")
    const args = ["--store", pgUrl, "--pg-schema", schema]
    const a = await start(args)
    const b = await start(args)
    let before = 0
    const r = await run("postgres_2", [a.url, b.url], [a.child.pid as number, b.child.pid as number], {
      onStepsStart: async () => {
        await waitStats()
        before = rowsWritten(pgUrl, schema)
      }
    })
    await waitStats()
    const rows = rowsWritten(pgUrl, schema) - before
    const log = checkLog(pgUrl, schema, r.sessionIds)
    await Promise.all([stop(a), stop(b)])
    results["postgres_2"] = { ...r, rowsPerStep: rows / Math.max(1, r.steps), lost: log.lost, duplicated: log.duplicated }
  }
  {
    const schema = schemaFor("w2")
    const server = await start(["--store", pgUrl, "--pg-schema", schema, "--workers", "2"])
    let before = 0
    const r = await run("workers_2", [server.url], [server.child.pid as number], {
      onStepsStart: async () => {
        await waitStats()
        before = rowsWritten(pgUrl, schema)
      }
    })
    await waitStats()
    const rows = rowsWritten(pgUrl, schema) - before
    const log = checkLog(pgUrl, schema, r.sessionIds)
    await stop(server)
    results["workers_2"] = { ...r, rowsPerStep: rows / Math.max(1, r.steps), lost: log.lost, duplicated: log.duplicated }
  }
  if (flags.diagnose) {
    const a = await start([])
    const b = await start([])
    const r2 = await run("memory_2", [a.url, b.url], [a.child.pid as number, b.child.pid as number])
    await Promise.all([stop(a), stop(b)])
    results["memory_2"] = { ...r2, lost: r2.trajectories.filter((t) => t.startsWith("status")).length, duplicated: 0 }
    const schema = schemaFor("pg1")
    const one = await start(["--store", pgUrl, "--pg-schema", schema])
    let before = 0
    const r1 = await run("postgres_1", [one.url], [one.child.pid as number], {
      onStepsStart: async () => {
        await waitStats()
        before = rowsWritten(pgUrl, schema)
      }
    })
    await waitStats()
    const rows = rowsWritten(pgUrl, schema) - before
    const log = checkLog(pgUrl, schema, r1.sessionIds)
    await stop(one)
    results["postgres_1"] = { ...r1, rowsPerStep: rows / Math.max(1, r1.steps), lost: log.lost, duplicated: log.duplicated }
  }
  if (!flags.skipKill) {
    const schema = schemaFor("kill")
    const args = ["--store", pgUrl, "--pg-schema", schema]
    const a = await start(args)
    const b = await start(args)
    let killed = false
    const r = await run("kill", [a.url, b.url], [a.child.pid as number], {
      onProgress: (done, total) => {
        if (!killed && done >= total / 2) {
          killed = true
          b.child.kill("SIGKILL")
        }
      }
    })
    const log = checkLog(pgUrl, schema, r.sessionIds)
    await stop(a)
    results["kill"] = { ...r, lost: log.lost, duplicated: log.duplicated }
  }
} finally {
  for (const s of schemas) {
    try {
      Postgres.dropSchema(pgUrl, s)
    } catch {
      // the database went away
    }
  }
  for (const agent of agents.values()) agent.destroy()
}

const memory = results["memory_1"] as RunResult
const equalReplay = (r: RunResult | undefined) => r !== undefined && r.trajectories.every((t, i) => t === memory.trajectories[i])
const rate = (r: RunResult | undefined) => (r === undefined ? 0 : r.toolCalls / r.seconds)
console.log("")
console.log("| run | completed | steps | tool calls/s | step p50 / p99 (ms) | RSS per 1k open sessions | PG rows written per step | CPU ms per step: servers / PostgreSQL / client | lost / duplicated turns | 5xx | trajectories = memory_1 |")
console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
for (const name of ["memory_1", "postgres_2", "workers_2", "memory_2", "postgres_1", "kill"]) {
  const r = results[name]
  if (r === undefined) continue
  console.log(`| ${name} | ${r.completed} / ${flags.episodes} | ${r.steps} | ${Math.round(rate(r))} | ${r.p50.toFixed(1)} / ${r.p99.toFixed(1)} | ${name === "kill" ? "—" : `${(r.rssPer1k / 1024 / 1024).toFixed(1)} MB`} | ${r.rowsPerStep === undefined ? "—" : r.rowsPerStep.toFixed(2)} | ${r.cpuPerStep.server.toFixed(2)} / ${r.cpuPerStep.postgres === undefined || name.startsWith("memory") ? "—" : r.cpuPerStep.postgres.toFixed(2)} / ${r.cpuPerStep.client.toFixed(2)} | ${r.lost} / ${r.duplicated} | ${r.errors5xx} | ${equalReplay(r)} |`)
  for (const f of r.failures.slice(0, 3)) console.log(`  ${name}: ${f}`)
}
const ratio = rate(results["postgres_2"]) / Math.max(1e-9, rate(memory))
const cpuOfRun = (r: Measured | undefined) => (r === undefined ? 0 : r.cpuPerStep.server + (r.name.startsWith("memory") ? 0 : r.cpuPerStep.postgres ?? 0) + r.cpuPerStep.client)
console.log(`\npostgres_2 / memory_1 tool calls/s: ${ratio.toFixed(2)}× (target ≥ 0.75×); workers_2 / memory_1: ${(rate(results["workers_2"]) / Math.max(1e-9, rate(memory))).toFixed(2)}×; CPU per step memory_1 / postgres_2 (what the ratio is on a CPU-bound machine): ${(cpuOfRun(results["memory_1"]) / Math.max(1e-9, cpuOfRun(results["postgres_2"]))).toFixed(2)}×; load average after ${fs.readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`)

const main = ["memory_1", "postgres_2", "workers_2"].map((n) => results[n]).filter((r): r is NonNullable<typeof r> => r !== undefined)
const kill = results["kill"]
if (flags.json) {
  console.log(JSON.stringify({
    episodes: flags.episodes,
    completed: Math.min(...main.map((r) => r.completed)),
    lost_turns: main.reduce((s, r) => s + r.lost, 0),
    duplicated_turns: main.reduce((s, r) => s + r.duplicated, 0),
    errors_5xx: [...main, ...(kill !== undefined ? [kill] : [])].reduce((s, r) => s + r.errors5xx, 0),
    calls_per_s: { memory_1: Math.round(rate(results["memory_1"])), postgres_2: Math.round(rate(results["postgres_2"])), workers_2: Math.round(rate(results["workers_2"])) },
    p99_ms: { memory_1: results["memory_1"]?.p99 ?? null, postgres_2: results["postgres_2"]?.p99 ?? null, workers_2: results["workers_2"]?.p99 ?? null },
    kill: kill === undefined ? null : { completed: kill.completed, lost_turns: kill.lost, duplicated_turns: kill.duplicated, equal_replay: equalReplay(kill) }
  }))
}
if (pg.url !== undefined) pg.stop()
process.exit(0)

/**
 * Loading ToolEnv2404 (12,301 tool files, 46.8k APIs) and inferring its G_dep: wall time and peak RSS, each
 * configuration in its own child process so peaks do not mix, printed against the targets (≤ 15 s, ≤ 1 GB on
 * 2 cores) and side by side for file-read concurrency 32 (the default) and 1.
 * Run: `npm run bench:toolbench-load` (data from PARAAGENT_DATA, default ../shared/data).
 */
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { dataPathIfPresent } from "../src/io/DataPath.ts"
import * as DepGraph from "../src/toolenv/DepGraph.ts"
import * as DepInference from "../src/toolenv/DepInference.ts"
import { loadDirectory } from "../src/toolenv/importers/ToolBench.ts"
import { Flag } from "effect/cli"
import * as BenchFlags from "./BenchFlags.ts"
import * as RunConfig from "../src/eval/RunConfig.ts"

const flags = await BenchFlags.parse("toolbench-load", "Loading ToolEnv2404 and inferring its G_dep: wall time and peak RSS", {
  child: RunConfig.intFlag("child", { minimum: 1, maximum: 1_024 }, "internal: measure one configuration with this file-read concurrency").pipe(Flag.optional)
})

const targetMs = 15_000
const targetRssMb = 1024

interface Run {
  readonly concurrency: number
  readonly importMs: number
  readonly inferMs: number
  readonly totalMs: number
  /** CPU time (user + system) of the whole load: what the wall time would be without other jobs on the cores (plus GC threads). */
  readonly cpuMs: number
  readonly peakRssMb: number
  readonly apis: number
  readonly tools: number
  readonly hardEdges: number
  readonly softEdges: number
  readonly toolsWithDeps: number
}

const child = async (dir: string, concurrency: number): Promise<Run> => {
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  const loaded = await Effect.runPromise(loadDirectory(dir, { concurrency }))
  const t1 = performance.now()
  const inferred = DepInference.infer(loaded.tools)
  const graph = DepGraph.make(inferred.edges)
  const stats = DepGraph.stats(inferred.tools, graph)
  const t2 = performance.now()
  const cpu = process.cpuUsage(cpu0)
  return {
    concurrency,
    importMs: t1 - t0,
    inferMs: t2 - t1,
    totalMs: t2 - t0,
    cpuMs: (cpu.user + cpu.system) / 1000,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
    apis: stats.apis,
    tools: stats.tools,
    hardEdges: stats.hardEdges,
    softEdges: stats.softEdges,
    toolsWithDeps: stats.toolsWithDeps
  }
}

const main = async (): Promise<void> => {
  const dir = dataPathIfPresent("toolenv2404", "toolenv2404_filtered")
  if (dir === undefined) {
    console.log("ToolEnv2404 not found under PARAAGENT_DATA (toolenv2404/toolenv2404_filtered): nothing to measure")
    return
  }
  if (flags.child._tag === "Some") {
    console.log(JSON.stringify(await child(dir, flags.child.value)))
    return
  }
  const self = fileURLToPath(import.meta.url)
  const runs: Array<Run> = []
  for (const concurrency of [32, 1]) {
    const out = execFileSync(process.execPath, [...process.execArgv, self, "--child", String(concurrency)], { encoding: "utf8", maxBuffer: 1 << 20 })
    runs.push(JSON.parse(out.trim().split("\n").pop() ?? "{}") as Run)
  }
  const [main, serial] = runs
  if (main === undefined || serial === undefined) return
  console.log(`ToolEnv2404: ${main.apis} APIs of ${main.tools} tools; G_dep ${main.hardEdges} hard + ${main.softEdges} soft edges, ${main.toolsWithDeps} APIs with a dependency`)
  console.log("concurrency  import ms  infer ms  total ms  cpu ms  peak RSS MB")
  for (const r of runs) {
    console.log(`${String(r.concurrency).padStart(11)}  ${r.importMs.toFixed(0).padStart(9)}  ${r.inferMs.toFixed(0).padStart(8)}  ${r.totalMs.toFixed(0).padStart(8)}  ${r.cpuMs.toFixed(0).padStart(6)}  ${r.peakRssMb.toFixed(0).padStart(11)}`)
  }
  console.log(`(cpu ms = user + system time of the process; wall time above it means other jobs shared the cores)`)
  console.log(`time:   ${(main.totalMs / 1000).toFixed(2)} s of the ${targetMs / 1000} s target (ratio ${(main.totalMs / targetMs).toFixed(2)})`)
  console.log(`memory: ${main.peakRssMb.toFixed(0)} MB of the ${targetRssMb} MB target (ratio ${(main.peakRssMb / targetRssMb).toFixed(2)})`)
  console.log(`import with 32 concurrent reads vs 1: ${(serial.importMs / main.importMs).toFixed(2)}× faster`)
}

void main()

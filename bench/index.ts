/**
 * Runs the benchmarks one after another in fresh processes (so one's heap does not weigh on the next) and prints
 * each one's output under a header. `npm run bench` runs the quick set; `npm run bench -- --all` adds the slow ones
 * (retrieval against minisearch ≈ 20 min, tuning, the reliability fuzz ≈ 3 min); `npm run bench -- <name>...` runs the named ones.
 */
import { spawnSync } from "node:child_process"
import { existsSync } from "node:fs"
import { join } from "node:path"
import { Argument, Flag } from "effect/cli"
import { dataPathIfPresent, repoRoot } from "../src/io/DataPath.ts"
import * as BenchFlags from "./BenchFlags.ts"

interface Bench {
  readonly name: string
  readonly args: ReadonlyArray<string>
  readonly nodeFlags?: ReadonlyArray<string>
  /** Needs this path under the data folder. */
  readonly data?: string
  readonly slow?: boolean
}

const benches: ReadonlyArray<Bench> = [
  { name: "world-build", args: ["3"], nodeFlags: ["--expose-gc"] },
  { name: "simulator", args: ["3"] },
  { name: "rollout", args: [] },
  { name: "advantage", args: [] },
  { name: "openai-client", args: [] },
  { name: "dense-search", args: [] },
  { name: "teacher-prompts", args: [] },
  { name: "reward-probe", args: [] },
  { name: "judge-linear", args: [] },
  { name: "serve-load", args: [], slow: true },
  { name: "serve-stall", args: [], slow: true },
  { name: "serve-startup", args: ["--starts", "20"], slow: true },
  { name: "serve-cluster", args: [], slow: true },
  { name: "learning", args: [] },
  { name: "ceiling", args: [] },
  { name: "oracle-lookahead", args: [] },
  { name: "set-scorer", args: [] },
  { name: "json-schema-validate", args: [], slow: true },
  { name: "tokenizer-hf", args: [], slow: true },
  { name: "toolbench-load", args: [], data: "toolenv2404/toolenv2404_filtered" },
  { name: "retrieval-ablation", args: [], data: "toolenv2404/toolenv2404_filtered", slow: true },
  { name: "retrieval-minisearch", args: [], data: "toolenv2404/toolenv2404_filtered", slow: true },
  { name: "retrieval-tune", args: [], data: "toolenv2404/toolenv2404_filtered", slow: true },
  { name: "fuzz", args: [], slow: true }
]

const flags = await BenchFlags.parse("index", "Run the benchmarks one after another in fresh processes", {
  all: Flag.Boolean("all").pipe(Flag.withDescription("add the slow benchmarks"), Flag.withDefault(false)),
  names: Argument.Literals("bench", benches.map((b) => b.name)).pipe(Argument.withDescription("benchmarks to run (default: the quick set)"), Argument.variadic())
})
const all = flags.all
const named: ReadonlyArray<string> = flags.names
const chosen = benches.filter((b) => (named.length > 0 ? named.includes(b.name) : all || !b.slow))
let failed = 0
for (const b of chosen) {
  console.log(`\n=== bench/${b.name}.ts ${b.args.join(" ")}`)
  if (b.data !== undefined && dataPathIfPresent(b.data) === undefined) {
    console.log(`skipped: the data folder has no ${b.data} (set PARAAGENT_DATA)`)
    continue
  }
  const file = join(repoRoot, "bench", `${b.name}.ts`)
  if (!existsSync(file)) {
    console.log(`skipped: ${file} is missing`)
    continue
  }
  const run = spawnSync(process.execPath, [...(b.nodeFlags ?? []), "--import", "tsx", file, ...b.args], { cwd: repoRoot, stdio: "inherit" })
  if (run.status !== 0) {
    failed++
    console.log(`bench/${b.name}.ts exited with ${run.status ?? run.signal}`)
  }
}
process.exitCode = failed === 0 ? 0 : 1

import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as RunStoreSqlite from "../../layers/storage/RunStoreSqlite.ts"
import * as ActionSpace from "../../src/agent/ActionSpace.ts"
import * as Pipeline from "../../src/training/Pipeline.ts"
import { RunStore } from "../../src/training/RunStore.ts"
import { spawnProgram } from "../support/Spawn.ts"

const dir = mkdtempSync(join(tmpdir(), "paraagent-badcli-"))
const emptyFile = join(dir, "empty.jsonl")
writeFileSync(emptyFile, "")
const library = join(dir, "lib")
mkdirSync(join(library, "Cat"), { recursive: true })
writeFileSync(join(library, "Cat", "t.json"), JSON.stringify({
  tool_name: "T",
  tool_description: "a tool",
  api_list: [{ name: "a", description: "an api", method: "GET", required_parameters: [], optional_parameters: [] }]
}))
const emptyLibrary = join(dir, "empty-lib")
mkdirSync(emptyLibrary)
const noQuery = join(dir, "no-query.json")
writeFileSync(noQuery, JSON.stringify([{ bogus: 1 }]))
// a folder without any write bit (read-only for root too: the chmod states the intent)
const readOnly = join(dir, "read-only")
mkdirSync(readOnly)
chmodSync(readOnly, 0o555)
// a run to resume: its store holds the pipeline's settings (50 tasks per level), no stage done yet
const resumable = join(dir, "resumable")
mkdirSync(resumable)
const { progress: _, ...record } = { ...Pipeline.defaults, worldSeed: 7, worldSize: 50_011 }
await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
  const store = Context.get(yield* Layer.build(RunStoreSqlite.layer(join(resumable, "run.sqlite"))), RunStore)
  yield* store.createRun("pipeline", JSON.parse(JSON.stringify({ pipeline: record, featureSchema: ActionSpace.featureSchemaHash })))
})))
// the same run started by another version of the action space, and one that records no feature schema
const staleRun = join(dir, "stale-run")
const unrecordedRun = join(dir, "unrecorded-run")
for (const [folder, schema] of [[staleRun, "0badcafe"], [unrecordedRun, undefined]] as const) {
  mkdirSync(folder)
  await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const store = Context.get(yield* Layer.build(RunStoreSqlite.layer(join(folder, "run.sqlite"))), RunStore)
    yield* store.createRun("pipeline", JSON.parse(JSON.stringify({ pipeline: record, featureSchema: schema })))
  })))
}
// the same run in a folder made read-only
const readOnlyRun = join(dir, "read-only-run")
mkdirSync(readOnlyRun)
copyFileSync(join(resumable, "run.sqlite"), join(readOnlyRun, "run.sqlite"))
chmodSync(join(readOnlyRun, "run.sqlite"), 0o444)
chmodSync(readOnlyRun, 0o555)
// a port in use
const busy = createServer()
await new Promise<void>((resolve) => busy.listen(0, "127.0.0.1", resolve))
const busyPort = String((busy.address() as AddressInfo).port)

/** A bad command line: the program, its arguments, the text its one stderr line must contain. */
type Row = readonly [program: string, args: ReadonlyArray<string>, names: string, env?: Readonly<Record<string, string>>]

const main = "programs/main.ts"
const compare = "programs/compare.ts"
const toolenv = "programs/toolenv.ts"
const retrieval = "programs/retrieval-eval.ts"
const judge = "programs/judge-agreement.ts"
const train = "programs/train-encoder.ts"
const tune = "programs/tune-fusion.ts"
const exporter = "programs/export.ts"
const serve = "programs/serve.ts"
const bfcl = "programs/bfcl.ts"

// One spawn costs ~2–4 s of CPU (tsx loading effect and the program): a row per distinct check of each program. Range
// checks that go through the same RunConfig flag helpers (intFlag / numberFlag / IntIn) are covered in-process by
// test/eval/RunConfig.test.ts; here one out-of-range value per program shows the reporter's one line.
const rows: ReadonlyArray<Row> = [
  // programs/main.ts is the training pipeline: its own flags; the comparison's rows are programs/compare.ts's
  [main, ["--out", library], "already holds"],
  [main, ["--out", "/dev/null/x"], "--out /dev/null/x"],
  [main, ["--seeds", "1,x"], "--seeds"],
  [main, ["--seeds", "2,2"], "--seeds"],
  [main, ["--rl-iterations", "0"], "--rl-iterations"],
  [main, ["--resume", "/nonexistent/run"], "--resume"],
  [main, ["--resume", library], "run.sqlite"],
  [main, ["--otlp", "ftp://collector.example"], "--otlp"],
  // issue 28: empty list items, outputs that cannot be written, --resume against its run
  [main, ["--seeds", ""], "--seeds"],
  [main, ["--seeds", "1,,2"], "--seeds"],
  [main, ["--ship", join(readOnly, "models"), "--out", join(dir, "shipped-run")], "--ship"],
  [main, ["--out", join(readOnly, "run")], "--out"],
  [main, ["--resume", resumable, "--tasks", "5"], "--tasks"],
  [main, ["--resume", resumable, "--out", join(dir, "elsewhere")], "--out"],
  [main, ["--resume", readOnlyRun], readOnlyRun],
  [main, ["--resume", staleRun], "0badcafe"],
  [main, ["--resume", unrecordedRun], "records no action-space feature schema"],
  [compare, ["--levels", "I1,,I2"], "--levels"],
  [compare, ["--paradigms", "ParaAct,"], "--paradigms"],
  [compare, ["--out", join(readOnly, "run")], "--out"],
  [exporter, ["verl", "--out", join(readOnly, "v")], "--out"],
  [serve, ["--port", busyPort], `127.0.0.1:${busyPort}: the port is in use`],
  [serve, ["--host", "no-such-host.invalid", "--port", "0"], "--host"],
  [serve, ["--allow-origin", "http://a.example,,http://b.example"], "--allow-origin"],
  [bfcl, ["generate", "--data", dir, "--category", "simple_python", "--out", join(readOnly, "result.jsonl")], "--out"],
  [compare, ["--out", library], "already holds"],
  [compare, ["--out", "/dev/null/x"], "--out /dev/null/x"],
  [compare, ["--policy", "openai"], "PARAAGENT_BASE_URL"],
  [compare, ["--max-rounds", "0"], "--max-rounds"],
  [compare, ["--world-size", "10"], "--world-size"],
  [compare, ["--levels", "I4"], "--levels"],
  [compare, ["--paradigms", "ParaAct,Nope"], "--paradigms"],
  [compare, ["--estimator", "nope"], "--estimator"],
  [compare, ["--mistake-rate", "2"], "--mistake-rate"],
  [compare, ["--max-retries", "99"], "--max-retries"],
  [compare, ["--no-such-flag"], "--no-such-flag"],
  [compare, ["--judge", "llm", "--base-url", "ftp://host/v1", "--model", "m"], "baseUrl"],
  [compare, ["--policy", "openai", "--base-url", "http://127.0.0.1:9/v1", "--model", "m"], "PARAAGENT_", { PARAAGENT_TIMEOUT_MS: "soon" }],
  [toolenv, ["stats", "--size", "10"], "--size"],
  [toolenv, ["sample", "--count", "-5"], "--count"],
  [toolenv, ["gold", "--index", "1e8"], "--index"],
  [toolenv, ["call", "x", "not json", "--size", "600"], "arguments"],
  [toolenv, ["tool", "no_such_tool", "--size", "600"], "no_such_tool"],
  [toolenv, ["stats", "--library", "/nonexistent/folder"], "--library"],
  [toolenv, ["frobnicate"], "frobnicate"],
  [retrieval, ["--k", "5"], "--k"],
  [retrieval, ["--queries", "/nonexistent.json"], "--queries"],
  [retrieval, ["--retriever", "nope"], "--retriever"],
  [retrieval, ["--library", library, "--queries", noQuery], noQuery],
  [judge, ["--input", emptyFile], emptyFile],
  [judge, ["--input", "/nonexistent.jsonl"], "--input"],
  [judge, [], "--input"],
  [train, ["--wordnet-share", "2"], "--wordnet-share"],
  [train, ["--out", "/dev/null/x"], "--out /dev/null/x"],
  [train, ["--library", emptyLibrary, "--out", join(dir, "enc"), "--no-wordnet"], "no tool to train on"],
  [tune, ["--on", "nowhere"], "--on"],
  [tune, ["--onnx", "/nonexistent.onnx"], "--onnx"],
  [exporter, ["verl", "--out", library], "already holds"],
  [exporter, ["trl", "--out", join(dir, "trl"), "--only", "rl"], "--only"],
  [exporter, ["verl", "--out", join(dir, "v"), "--fault-rate", "2"], "--fault-rate"],
  ["bench/rollout.ts", ["abc"], "<tasks>"],
  ["bench/simulator.ts", ["0.1"], "<seconds>"],
  ["bench/world-build.ts", ["0"], "<reps>"],
  ["bench/index.ts", ["nonexistent"], "nonexistent"],
  ["bench/advantage.ts", ["--bogus"], "--bogus"],
  ["bench/kind-credit.ts", ["/nonexistent/run"], "/nonexistent/run/run.sqlite"],
  ["bench/pool-outcomes.ts", ["/nonexistent/outcomes.json", "--pairs", "grpo-DAgger"], "/nonexistent/outcomes.json"],
  ["bench/dense-search.ts", ["--rows", "-1"], "--rows"],
  ["bench/retrieval-tune.ts", ["--round", "3"], "--round"],
  ["bench/retrieval-slots.ts", ["--tasks", "0"], "--tasks"],
  ["bench/teacher-prompts.ts", ["5", "Foo"], "<paradigm>"],
  ["bench/ceiling.ts", ["--paradigm", "Sequential"], "--paradigm"],
  ["studies/dense-feedback.ts", ["--onnx", "/nonexistent.onnx"], "--onnx"],
  ["studies/use-explore.ts", ["--packages", "/nonexistent/node_modules"], "--packages"],
  ["studies/use-explore.ts", ["--packages", dir, "--fields", "api,bogus"], "bogus"],
  ["studies/use-explore.ts", ["--packages", dir, "--part", "2", "--parts", "2"], "--part"]
]

describe.concurrent("a bad command line: exit ≠ 0, one stderr line naming the flag or file, no stack trace", () => {
  const cases = rows.map(([program, args, names, env]) => ({ program, args, names, env: env ?? {} }))
  it.each(cases)("$program $args", async ({ program, args, names, env }) => {
    const r = await spawnProgram(program, args, env)
    const lines = r.stderr.split("\n").filter((l) => l.trim() !== "")
    expect(r.code, r.stderr).not.toBe(0)
    expect(lines, r.stderr).toHaveLength(1)
    expect(lines[0]).toContain(names)
    expect(r.stdout + r.stderr).not.toContain("    at ")
  })
})

/**
 * Start-up readiness, many starts in a row: each start spawns `npm run serve` on a free port and polls `/health`
 * every 50 ms from the spawn on (test/support/StartupProbe.ts); a request is refused (no socket yet) or answered
 * (200, or 503 `starting`); one left unanswered past its bound is the failure this checks for. Prints one line per
 * start and a summary; `--json` ends with one JSON line.
 *
 *   npx tsx bench/serve-startup.ts --starts 100 --world-size 2000
 */
import { Flag } from "effect/cli"
import * as RunConfig from "../src/eval/RunConfig.ts"
import { probeStart, summarize } from "../test/support/StartupProbe.ts"
import * as BenchFlags from "./BenchFlags.ts"

const flags = await BenchFlags.parse("serve-startup", "Starts npm run serve N times, polling /health from the spawn; counts requests over their bound", {
  starts: RunConfig.intFlag("starts", { minimum: 1, maximum: 10_000 }, "how many starts in a row").pipe(Flag.withDefault(100)),
  worldSize: RunConfig.flags.worldSize.pipe(Flag.withDefault(2000)),
  boundMs: RunConfig.intFlag("bound-ms", { minimum: 100, maximum: 600_000 }, "a request's bound (a safety net: a hung request is one over it)").pipe(Flag.withDefault(20_000)),
  json: Flag.Boolean("json").pipe(Flag.withDescription("end with one JSON line"), Flag.withDefault(false))
})

const totals = { starts: 0, polls: 0, refused: 0, ok: 0, starting: 0, overBound: 0, errors: 0, other: 0, slowestMs: 0, readyMs: [] as Array<number> }
for (let i = 0; i < flags.starts; i++) {
  const probed = await probeStart(["--world-size", String(flags.worldSize)], { everyMs: 50, boundMs: flags.boundMs, afterReady: 5 })
  probed.child.kill("SIGKILL")
  await new Promise((resolve) => (probed.child.exitCode !== null ? resolve(undefined) : probed.child.once("exit", resolve)))
  const s = summarize(probed.polls)
  totals.starts++
  totals.polls += s.polls
  totals.refused += s.refused
  totals.ok += s.ok
  totals.starting += s.starting
  totals.overBound += s.overBound
  totals.errors += s.errors.length
  totals.other += s.otherStatus.length
  totals.slowestMs = Math.max(totals.slowestMs, s.slowestMs)
  totals.readyMs.push(probed.readyMs)
  console.log(`start ${i + 1}: ready after ${probed.readyMs} ms; ${s.polls} polls: ${s.refused} refused, ${s.ok} 200, ${s.starting} 503 starting, ${s.overBound} over ${flags.boundMs} ms, ${s.errors.length} errors${s.errors.length > 0 ? ` (${s.errors[0]})` : ""}, slowest answer ${s.slowestMs} ms`)
}
const sorted = [...totals.readyMs].sort((a, b) => a - b)
const median = sorted[Math.floor(sorted.length / 2)] ?? 0
console.log(`${totals.starts} starts: ${totals.polls} polls, ${totals.refused} refused, ${totals.ok} answered 200, ${totals.starting} answered 503 starting, ${totals.overBound} over their bound, ${totals.errors} errors, ${totals.other} other statuses; slowest answer ${totals.slowestMs} ms; ready after ${median} ms (median)`)
if (flags.json) {
  console.log(JSON.stringify({ starts: totals.starts, polls: totals.polls, refused: totals.refused, ok: totals.ok, starting: totals.starting, over_bound: totals.overBound, errors: totals.errors, other_status: totals.other, slowest_ms: totals.slowestMs, ready_ms_median: median }))
}
process.exit(totals.overBound + totals.errors + totals.other === 0 ? 0 : 1)

/**
 * A realistic report input for the report tests: two estimators × three seeds of RL curves, the Table-2 ablation and
 * the Table-1 paradigms of three levels, the pipeline's stages, and a hand-made trajectory whose third round runs
 * three calls in parallel (one of them failing) and whose request carries markup to escape.
 */
import type { Observation } from "../../src/domain/Call.ts"
import { errorOutcome } from "../../src/domain/Call.ts"
import { callId, taskId, toolName, trajectoryId } from "../../src/domain/Ids.ts"
import type { SearchResult, Step, Trajectory } from "../../src/domain/Trajectory.ts"
import { validStep } from "../../src/domain/Trajectory.ts"
import type * as Report from "../../src/eval/Report.ts"
import { rng } from "../../src/math/Random.ts"

/** A request with markup in it: the report must show it, never run it. */
export const hostileRequest = `Compare "A & B" <script>alert("x")</script> and list the <b>two</b> cheapest | offers`

const search = (slot: string, startMs: number, endMs: number, hits: ReadonlyArray<string>, error?: string): SearchResult => ({
  slot,
  query: `find a tool to ${slot}`,
  hits: hits.map((h, i) => ({ tool: toolName(h), score: 12 - i })),
  ...(error !== undefined ? { error } : {}),
  startMs,
  endMs
})

const call = (id: string, tool: string, startMs: number, endMs: number, ok = true): Observation => ({
  callId: callId(id),
  tool: toolName(tool),
  arguments: { q: id },
  outcome: ok ? { _tag: "ok", payload: { id } } : errorOutcome("rate_limited", "429 Too Many Requests"),
  refs: [],
  attempts: ok ? 1 : 3,
  startMs,
  endMs
})

const step = (
  index: number,
  phase: Step["phase"],
  startMs: number,
  policyMs: number,
  endMs: number,
  searches: ReadonlyArray<SearchResult>,
  observations: ReadonlyArray<Observation>,
  answer?: string
): Step => ({
  index,
  raw: answer !== undefined ? `<answer>${answer}</answer>` : "<think>...</think>",
  turn: { searches: searches.map((s) => ({ slot: s.slot, query: s.query })), calls: [], ...(answer !== undefined ? { answer } : {}) },
  validation: validStep,
  controller: answer !== undefined ? "Answer" : phase === "explore" ? "Need" : "May",
  phase,
  searches,
  observations,
  startMs,
  policyMs,
  endMs,
  usage: { promptTokens: 900 + 150 * index, completionTokens: 120 },
  reward: { rBase: index === 1 ? 0 : 1, rPlan: index % 2, rStep: ((index === 1 ? 0 : 1) + (index % 2)) / 2 },
  advantage: { traj: 0.25, phase: -0.5 + index * 0.1, step: index === 1 ? -1.2 : 0.3, combined: 0.25 + 0.5 * (-0.5 + index * 0.1) + 0.25 * (index === 1 ? -1.2 : 0.3) }
})

/** The trajectory of the timeline: round 3 runs c1, c2 (fails) and c3 at overlapping times. */
export const trajectory: Trajectory = {
  id: trajectoryId("traj-<i3>-0"),
  taskId: taskId("test-i3-0042"),
  paradigm: "ParaAct",
  policy: "paraagent-rl seed 1",
  seed: 1,
  steps: [
    step(0, "explore", 0, 310, 402, [
      search("search flights", 312, 377, ["search_flights_for_skyscan", "flight_offers_for_amadeus"]),
      search("convert currency", 313, 395, ["convert_for_currency_api"])
    ], []),
    step(1, "explore", 402, 280, 731, [search("hotel <prices>", 684, 729, [], "retriever timed out")], []),
    step(2, "execute", 731, 350, 1_512, [], [
      call("c1", "search_flights_for_skyscan", 1_083, 1_390),
      call("c2", "flight_offers_for_amadeus", 1_084, 1_505, false),
      call("c3", "convert_for_currency_api", 1_085, 1_201)
    ]),
    step(3, "execute", 1_512, 300, 2_044, [], [
      { ...call("c4", "flight_offers_for_amadeus", 1_814, 2_040), refs: [callId("c1")] }
    ]),
    step(4, "execute", 2_044, 410, 2_454, [], [], "The two cheapest offers are <EUR 120> & EUR 134.")
  ],
  phases: [
    { kind: "explore", start: 0, end: 2, reward: { l1: 0.5, l2: 1, l3: 1, l4: 0.5, rPhase: 0.7 } },
    { kind: "execute", start: 2, end: 5, reward: { l1: 1, l2: 0.667, l3: 0.75, l4: 0.75, rPhase: 0.758 } }
  ],
  answer: "The two cheapest offers are <EUR 120> & EUR 134.",
  stop: "answer",
  startedAt: 1_764_633_600_000,
  durationMs: 2_454,
  verdict: { quality: "YES", faithfulness: "PARTIAL", utility: "YES", rationale: "Q: 2/2 gold facts <stated>", judge: "rule" },
  answerReward: { pattern: "101", rAns: 0 }
}

/** The learning curves: `paraagent` climbs faster than `grpo`; per-seed noise from a fixed generator. */
export const curves = (iterations = 25): ReadonlyArray<Report.Curve> =>
  (["grpo", "paraagent"] as const).flatMap((estimator) =>
    [1, 2, 3].map((seed) => {
      const r = rng(seed * 97 + (estimator === "grpo" ? 0 : 1))
      const rate = estimator === "grpo" ? 0.08 : 0.14
      return {
        estimator,
        seed,
        points: Array.from({ length: iterations }, (_, iteration) => {
          const progress = 1 - Math.exp(-rate * iteration)
          const noise = () => (r.next() - 0.5) * 0.06
          return {
            iteration,
            rAns: -0.4 + 1.5 * progress + noise(),
            pass1: Math.min(1, Math.max(0, 0.22 + 0.45 * progress + noise())),
            rounds: 7.5 - 3.1 * progress + 4 * noise(),
            calls: 5.2 - 0.8 * progress + 3 * noise(),
            kl: 0.002 + 0.03 * progress + noise() / 20,
            clipFraction: 0.05 + 0.1 * r.next(),
            entropy: 1.9 - 0.6 * progress + noise()
          }
        })
      }
    })
  )

const cell = (base: number): Partial<Record<Report.TableMetric, Report.MeanSd>> => ({
  pass1: { mean: 0.2 + base * 0.15, sd: 0.021 },
  path: { mean: 0.45 + base * 0.1, sd: 0.034 },
  pathEquivalent: { mean: 0.5 + base * 0.1, sd: 0.03 },
  rounds: { mean: 8 - base, sd: 0.31 },
  calls: { mean: 6 - base / 2, sd: 0.42 },
  searches: { mean: 4 - base / 2, sd: 0.27 },
  decisions: { mean: 9 - base, sd: 0.5 }
})

const levels = (base: number) => ({ I1: cell(base + 0.5), I2: cell(base), I3: cell(base - 0.5), Avg: cell(base) })

/** The fixture's report input (the timeline unless one is given). */
export const input = (timeline?: Report.TimelineInput): Report.ReportInput => ({
  title: "ParaAgent pipeline <run 7>",
  command: "npm start -- pipeline --seeds 1,2,3 --out runs/pipeline-7",
  seeds: [1, 2, 3],
  curves: curves(),
  ablation: {
    Backbone: levels(0),
    "+SFT": levels(1),
    "+SFT & RL (GRPO)": levels(1.6),
    "+SFT & RL (ours)": levels(2.2)
  },
  paradigms: {
    ParaAct: levels(2.2),
    ReAct: levels(1.2),
    ExploreThenExecute: levels(1.7),
    DFSDT: levels(0.9)
  },
  stages: [
    { name: "teacher demonstrations", durationMs: 184_250, detail: "600 rollouts on 200 train tasks" },
    { name: "judge filter", durationMs: 9_800, detail: "kept 452 / dropped 148 (24.7 %)" },
    { name: "SFT", durationMs: 61_400, detail: "projection coverage 97.1 % (439 of 452 turns)" },
    { name: "RL grpo", durationMs: 3_912_000, detail: "3 seeds × 25 iterations" },
    { name: "RL paraagent", durationMs: 3_870_500, detail: "3 seeds × 25 iterations" },
    { name: "evaluation", durationMs: 702, detail: "90 held-out tasks × 4 paradigms" }
  ],
  timeline: timeline ?? { taskId: "test-i3-0042", request: hostileRequest, trajectory },
  notes: ["Pass@1 is judged by the rule judge <strict>.", "sd is over the 3 seeds."],
  modelNames: { grpo: "+SFT & RL (GRPO)", paraagent: "+SFT & RL (ours)" },
  paired: {
    caption: "Points of Pass@1 <greedy> on the same tasks.",
    columns: ["All", "I1"],
    rows: [
      { pair: "GRPO-SFT", cells: { All: { mean: 5.25, lo: 1.5, hi: 9.04 }, I1: { mean: -2, lo: -6.5, hi: 2.5 } } },
      { pair: "Ours-GRPO", cells: { All: { mean: NaN, lo: NaN, hi: NaN } } }
    ]
  }
})

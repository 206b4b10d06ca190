/**
 * Hand-made tasks and trajectories for the judge tests: one small basketball world whose answers can be made
 * complete or not, faithful or not, well-evidenced or not, independently.
 */
import type { Json, JsonObject } from "../../src/domain/Json.ts"
import { callId, taskId, toolName, trajectoryId } from "../../src/domain/Ids.ts"
import type { ErrorKind, Observation } from "../../src/domain/Call.ts"
import { errorOutcome } from "../../src/domain/Call.ts"
import type { GoldFact, Task } from "../../src/domain/Task.ts"
import type { Grade, Step, Trajectory, Verdict } from "../../src/domain/Trajectory.ts"
import { validStep } from "../../src/domain/Trajectory.ts"

/** A task with the given gold facts (key → value). */
export const makeTask = (id: string, request: string, facts: ReadonlyArray<readonly [string, string]>): Task => ({
  id: taskId(id),
  request,
  level: "I1",
  categories: ["Sports"],
  gold: [{ id: callId("g1"), tool: toolName("top_scorer"), arguments: { team_id: "T-42" }, deps: [] }],
  facts: facts.map(([key, value]): GoldFact => ({ key, value, call: callId("g1"), path: key })),
  split: "test",
  seed: 1,
  source: "hand-made"
})

let counter = 0

/** A successful call. */
export const ok = (tool: string, args: JsonObject, payload: Json): Observation => {
  counter++
  return {
    callId: callId(`c${counter}`),
    tool: toolName(tool),
    arguments: args,
    outcome: { _tag: "ok", payload },
    refs: [],
    attempts: 1,
    startMs: 0,
    endMs: 5
  }
}

/** A failed call. */
export const failed = (tool: string, args: JsonObject, kind: ErrorKind, message: string): Observation => {
  counter++
  return {
    callId: callId(`c${counter}`),
    tool: toolName(tool),
    arguments: args,
    outcome: errorOutcome(kind, message),
    refs: [],
    attempts: 1,
    startMs: 0,
    endMs: 5
  }
}

const step = (index: number, observations: ReadonlyArray<Observation>): Step => ({
  index,
  raw: "",
  validation: validStep,
  controller: "May",
  phase: "execute",
  searches: [],
  observations,
  startMs: index * 10,
  policyMs: 1,
  endMs: index * 10 + 9,
  usage: { promptTokens: 0, completionTokens: 0 }
})

/** A trajectory: one step per group of observations, then the answer (undefined: stopped without one). */
export const makeTrajectory = (
  task: Task,
  rounds: ReadonlyArray<ReadonlyArray<Observation>>,
  answer: string | undefined
): Trajectory => ({
  id: trajectoryId(`${task.id}-r`),
  taskId: task.id,
  paradigm: "ParaAct",
  policy: "hand-made",
  seed: 0,
  steps: rounds.map((obs, i) => step(i, obs)),
  phases: [{ kind: "execute", start: 0, end: rounds.length }],
  ...(answer === undefined ? {} : { answer }),
  stop: answer === undefined ? "max_rounds" : "answer",
  startedAt: 0,
  durationMs: 10
})

/** The Q/F/U bit pattern of a verdict (YES = 1). */
export const pattern = (v: Pick<Verdict, "quality" | "faithfulness" | "utility">): string =>
  [v.quality, v.faithfulness, v.utility].map((g: Grade) => (g === "YES" ? "1" : "0")).join("")

// ---------------------------------------------------------------------------------------------------------------
// The basketball world
// ---------------------------------------------------------------------------------------------------------------

/** Who scored most for the Warriors last night. */
export const scorerTask = makeTask(
  "scorer",
  "Who was the top scorer of the Golden State Warriors (team T-42) last night, and how many points did he score?",
  [["team", "Golden State Warriors"], ["player", "Stephen Curry"], ["points", "31"]]
)

/** The roster call that observes all three facts. */
export const fullEvidence = (): Observation =>
  ok("top_scorer", { team_id: "T-42" }, {
    team: "Golden State Warriors",
    game_date: "2024-03-05",
    top_scorer: { name: "Stephen Curry", points: 31, rebounds: 6 },
    others: [{ name: "Klay Thompson", points: 22 }, { name: "Draymond Green", points: 9 }]
  })

/** A call that observed only the points, for a player the agent named itself (its own argument is no evidence). */
export const pointsOnly = (): Observation => ok("player_points", { player: "Stephen Curry", team_id: "T-42" }, { points: 31 })

/** A call that observed the top scorer and his points, but not the team (only the request names it). */
export const scorerOnly = (): Observation => ok("top_scorer", { team_id: "T-42" }, { top_scorer: { name: "Stephen Curry", points: 31 } })

/** The roster call failing. */
export const serverError = (): Observation => failed("top_scorer", { team_id: "T-42" }, "server_error", "upstream service unavailable")

/** One trajectory per Q/F/U pattern, named by the pattern the rule judge must give it. */
export const patternCases = (): ReadonlyArray<{ readonly pattern: string; readonly trajectory: Trajectory; readonly why: string }> => [
  {
    pattern: "111",
    why: "complete, faithful, well-evidenced",
    trajectory: makeTrajectory(scorerTask, [[fullEvidence()]], "The Golden State Warriors' top scorer was Stephen Curry with 31 points.")
  },
  {
    pattern: "110",
    why: "complete and faithful (the team is the claim's subject, restated from the request), but no call observed the team",
    trajectory: makeTrajectory(scorerTask, [[scorerOnly()]], "The Golden State Warriors' top scorer was Stephen Curry with 31 points.")
  },
  {
    pattern: "101",
    why: "complete and evidenced, with an invented coach and title count",
    trajectory: makeTrajectory(
      scorerTask,
      [[fullEvidence()]],
      "Stephen Curry led the Golden State Warriors with 31 points; coach Steve Kerr has won 5 titles."
    )
  },
  {
    pattern: "100",
    why: "the right facts, guessed: every call failed",
    trajectory: makeTrajectory(scorerTask, [[serverError()]], "Stephen Curry scored 31 points for the Golden State Warriors.")
  },
  {
    pattern: "011",
    why: "faithful and evidenced, but the team is missing",
    trajectory: makeTrajectory(scorerTask, [[fullEvidence()]], "Stephen Curry was the top scorer with 31 points.")
  },
  {
    pattern: "010",
    why: "an honest report that the tools failed",
    trajectory: makeTrajectory(
      scorerTask,
      [[serverError()], [serverError()]],
      "I could not find the top scorer: the top_scorer tool failed twice with a server error (500)."
    )
  },
  {
    pattern: "001",
    why: "the evidence was there, the answer contradicts it",
    trajectory: makeTrajectory(scorerTask, [[fullEvidence()]], "Jayson Tatum led the Boston Celtics with 45 points.")
  },
  {
    pattern: "000",
    why: "nothing observed, everything invented",
    trajectory: makeTrajectory(scorerTask, [[serverError()]], "Jayson Tatum led the Boston Celtics with 45 points.")
  }
]

const MB = 1 << 20
const fill = (unit: string): string => unit.repeat(Math.ceil(MB / unit.length)).slice(0, MB)

/**
 * 1 MB answers that made the old fact extractor backtrack (capital runs) or rebuild the string once per token (many
 * tokens), and a few that stress the claim reader's passes: judged by test/judge/Adversarial.test.ts, timed by
 * bench/judge-linear.ts.
 */
export const adversarialAnswers: ReadonlyArray<readonly [string, string]> = [
  ["a capital run", fill("A")],
  ["capital words", fill("AB ")],
  ["dotted capitals", fill("A.")],
  ["a digit run", fill("7")],
  ["digits with separators", fill("1.2,")],
  ["a quote run", fill("\"")],
  ["single quotes", fill("'a")],
  ["backticks", fill("`x")],
  ["ids", fill("A-1-")],
  ["dates", fill("2024-03-05 ")],
  ["month dates", fill("March 5, 2024 ")],
  ["list markers", fill("1.\n")],
  ["bold labels", fill("**Top Scorer:** ")],
  ["one long blank between two capitals", `A${" ".repeat(MB - 2)}B`],
  ["mixed", fill("Stephen Curry 31 \"T-42\" 2024-03-05 ORD-17 12:30 A.B-C 42km ")],
  // the claim reader's own passes (issue 24): labels, copulas, statement words, numerals in words, invisible characters
  ["copulas", fill("x is ")],
  ["labels", fill("a: b; ")],
  ["hedges and negations", fill("31 or not ")],
  ["number words", fill("forty one thousand ")],
  ["zero-width characters", fill("31\u200b")],
  ["table rows", fill("| a | 31 |\n")]
]

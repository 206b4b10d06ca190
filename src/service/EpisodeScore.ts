/**
 * A finished served episode judged and rewarded for its client — one function for the two places that end an episode
 * over a wire: `POST /sessions/{id}/score` (and the ORS episode end, src/service/Handlers.ts) and an MCP episode's end
 * (src/service/McpEpisodes.ts).
 */
import { Effect } from "effect"
import type { Task } from "../domain/Task.ts"
import type { Trajectory, Verdict } from "../domain/Trajectory.ts"
import * as Scoring from "../eval/Scoring.ts"
import type { Judge } from "../judge/Judge.ts"
import * as Redaction from "../judge/Redaction.ts"
import * as Reward from "../math/Reward.ts"
import type * as Equivalence from "../toolenv/Equivalence.ts"
import type { ToolLibrary } from "../toolenv/ToolLibrary.ts"

/** An ended episode's score: the judged trajectory, what the client may see of the verdict, and the rewards. */
export interface EpisodeScore {
  /** The trajectory with its verdict (without one when the judge failed). */
  readonly judged: Trajectory
  /** The verdict redacted for the client (what is missing, never a gold value); absent when the judge failed. */
  readonly verdict?: Verdict
  /** The judge's failure message: the trajectory is unjudged (R_ans 0 under the default masking). */
  readonly judgeError?: string
  /** Step / phase / answer rewards with the credit terms (`Scoring.rewardsOf`, the default reward config). */
  readonly rewards: Reward.TrajectoryScore
}

/**
 * Judges a finished trajectory of `task` and rewards it (`Scoring.rewardsOf` over the library's G_dep, `equivalent`:
 * which tools stand in for a gold tool). A judge failure is returned as `judgeError`, never as a failure: the caller
 * decides (the HTTP route refuses, an MCP episode reports it unjudged). The full rationale goes to the debug log with
 * `annotations`; the client's verdict is redacted.
 */
export const score = (
  judge: Judge["Service"],
  library: ToolLibrary["Service"],
  equivalent: Equivalence.Equivalent,
  task: Task,
  trajectory: Trajectory,
  annotations: Record<string, string>
): Effect.Effect<EpisodeScore> =>
  Effect.gen(function*() {
    const outcome = yield* judge.judge(task, trajectory).pipe(
      Effect.map((verdict) => ({ verdict, error: undefined })),
      Effect.catchTag("JudgeError", (e) => Effect.succeed({ verdict: undefined, error: e.message }))
    )
    const judged: Trajectory = outcome.verdict === undefined ? trajectory : { ...trajectory, verdict: outcome.verdict }
    const deps = (from: string, to: string) => library.graph.kind(from, to)
    const rewards = Scoring.rewardsOf(task, judged, { deps, equivalent, reward: Reward.defaultRewardConfig })
    // the client sees what is missing, never the gold values; the full rationale goes to the server's log
    if (outcome.verdict?.rationale !== undefined) {
      yield* Effect.logDebug("judge rationale").pipe(Effect.annotateLogs({ ...annotations, rationale: outcome.verdict.rationale }))
    }
    return {
      judged,
      ...(outcome.verdict !== undefined ? { verdict: Redaction.forClient(task, outcome.verdict) } : {}),
      ...(outcome.error !== undefined ? { judgeError: outcome.error } : {}),
      rewards
    }
  })

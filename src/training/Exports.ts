/**
 * Training exports: judge-filtered trajectories as the chat conversations SFT trainers read (TRL, verl), and every
 * scored step as one RL experience record. Pure: trajectories, tasks and tool specs in, JSONL records out.
 */
import { Result, Schema } from "effect"
import { TaskId, TrajectoryId } from "../domain/Ids.ts"
import { Level } from "../domain/Task.ts"
import type { Task } from "../domain/Task.ts"
import type { ToolSpec } from "../domain/Tool.ts"
import { Paradigm, Phase, Verdict } from "../domain/Trajectory.ts"
import type { Step, Trajectory } from "../domain/Trajectory.ts"
import * as Evaluation from "../math/Evaluation.ts"
import * as History from "../math/History.ts"
import * as OpenAiFormat from "../protocol/OpenAiFormat.ts"
import * as PolicyPrompt from "../agent/PolicyPrompt.ts"
import * as Rollout from "../runtime/Rollout.ts"

/** The inputs do not fit together (a trajectory of an unknown task, a tool the given library lacks, a bad option). */
export class ExportError extends Schema.TaggedError<ExportError>()("ExportError", {
  field: Schema.String,
  value: Schema.String,
  message: Schema.String
}) {}

// ---------------------------------------------------------------------------------------------------------------
// Line schemas: each record's type is its JSON encoding, so `JSON.stringify(line)` is the line and
// `Schema.decodeUnknownSync(Schema.fromJsonString(DemonstrationLine))(text)` reads it back.

/** How a demonstration renders the agent's turns: ParaAct text, or native OpenAI tool calls. */
export const Mode = Schema.Literals(["text", "native"])
/** How a demonstration renders the agent's turns. */
export type Mode = typeof Mode.Type

/** One SFT demonstration: a whole trajectory as the conversation an OpenAI-compatible policy is shown, plus its reply. */
export const DemonstrationLine = Schema.Struct({
  messages: Schema.Array(OpenAiFormat.ChatMessage),
  /** The OpenAI function specs of the tools the agent had found (native: `search_tools` first). */
  tools: Schema.Array(OpenAiFormat.OpenAiTool),
  id: TrajectoryId,
  task_id: TaskId,
  level: Level,
  paradigm: Paradigm,
  policy: Schema.String,
  mode: Mode,
  verdict: Verdict
})
/** One SFT demonstration. */
export type DemonstrationLine = typeof DemonstrationLine.Type

/** A step's rewards: R_step and its parts, the R_phase of its phase (when scored), the trajectory's R_ans. */
export const ExperienceReward = Schema.Struct({
  r_step: Schema.Finite,
  r_base: Schema.Finite,
  r_plan: Schema.Finite,
  r_phase: Schema.optionalKey(Schema.Finite),
  r_ans: Schema.Finite
})
/** A step's rewards. */
export type ExperienceReward = typeof ExperienceReward.Type

/** A step's advantages by level and combined (Eq. 7), as the estimator computed them. */
export const ExperienceAdvantage = Schema.Struct({
  traj: Schema.Finite,
  phase: Schema.Finite,
  step: Schema.Finite,
  combined: Schema.Finite,
  /** Per-action credit (estimators that give it): each call's, then each search's advantage in turn order. */
  actions: Schema.optionalKey(Schema.Array(Schema.Finite)),
  /** The plan bit's advantage (per-action credit). */
  plan: Schema.optionalKey(Schema.Finite)
})
/** A step's advantages. */
export type ExperienceAdvantage = typeof ExperienceAdvantage.Type

/** One RL experience record: one step of a scored trajectory, its turn, rewards and advantages. */
export const ExperienceLine = Schema.Struct({
  trajectory_id: TrajectoryId,
  task_id: TaskId,
  /** The group the advantages were normalised over (default `<task id>/<paradigm>`). */
  group: Schema.String,
  group_index: Schema.Int,
  step: Schema.Int,
  phase: Phase,
  paradigm: Paradigm,
  policy: Schema.String,
  /** The parameter version of a learned policy that acted (the behaviour policy). */
  version: Schema.optionalKey(Schema.Finite),
  /** The turn as the policy wrote it. */
  text: Schema.String,
  logprob: Schema.optionalKey(Schema.Finite),
  token_logprobs: Schema.optionalKey(Schema.Array(Schema.Finite)),
  /** The exact prompt the turn was generated from (LLM policies that record it). */
  prompt: Schema.optionalKey(Schema.String),
  reward: ExperienceReward,
  advantage: ExperienceAdvantage,
  estimator: Schema.String
})
/** One RL experience record. */
export type ExperienceLine = typeof ExperienceLine.Type

// ---------------------------------------------------------------------------------------------------------------
// Results

/** Why a trajectory gave no line. */
export type SkipReason = "unjudged" | "not_kept" | "no_steps" | "unscored"

/** A trajectory left out of an export, and why. */
export interface Skipped {
  readonly id: TrajectoryId
  readonly reason: SkipReason
}

/** The lines of an export (append them with `RunFolder.appendJsonl`) and the trajectories left out. */
export interface Exported<A> {
  readonly lines: ReadonlyArray<A>
  readonly skipped: ReadonlyArray<Skipped>
}

// ---------------------------------------------------------------------------------------------------------------
// Demonstrations (SFT)

/** How demonstrations are built. */
export interface DemonstrationOptions {
  readonly mode: Mode
  /** The tasks the trajectories ran on (each trajectory's `taskId` must be among them). */
  readonly tasks: ReadonlyArray<Task>
  /** The library the rollouts ran on, by tool name (`ToolLibrary.get`): every retrieved tool must resolve. */
  readonly lookup: (name: string) => ToolSpec | undefined
  /** T_max the rollouts ran with (the system prompt states it); default the runtime's, 12. */
  readonly maxRounds?: number
  /** Observation and description budgets; default the OpenAI policy's. */
  readonly budgets?: Partial<PolicyPrompt.HistoryBudgets>
  /** Which judged trajectories to keep; default {@link passed}. Unjudged ones are never kept. */
  readonly keep?: (trajectory: Trajectory, task: Task) => boolean
}

/** The default filter: Pass@k's success (`Evaluation.solved`: Quality, Faithfulness and Utility YES — complete, faithful, evidenced). */
export const passed = (trajectory: Trajectory, task: Task): boolean => Evaluation.outcomeOf(task, trajectory).success

/** A T_max that is not a positive integer, as an error (undefined when it is fine). */
const badMaxRounds = (maxRounds: number): ExportError | undefined =>
  Number.isInteger(maxRounds) && maxRounds >= 1
    ? undefined
    : new ExportError({ field: "maxRounds", value: String(maxRounds), message: `maxRounds must be a positive integer, got ${maxRounds}` })

/**
 * One judged trajectory as a demonstration, unfiltered: the conversation the OpenAI-compatible policy
 * (`layers/model/PolicyOpenAi.ts`, same mode, same budgets) is sent before the trajectory's last step — system prompt,
 * request, every earlier step of its path as assistant / observation messages, the DFSDT and last-round notes — then
 * the last step's assistant message. Its observations (none after an answer) are left out: nothing follows them to
 * learn from. Fails on a trajectory of another task, with no verdict or no steps, with more steps than `maxRounds`,
 * or with a retrieved tool `lookup` lacks.
 */
export const demonstration = (
  trajectory: Trajectory,
  task: Task,
  options: Omit<DemonstrationOptions, "tasks" | "keep">
): Result.Result<DemonstrationLine, ExportError> => {
  const fail = (field: string, value: string, message: string) => Result.fail(new ExportError({ field, value, message }))
  const maxRounds = options.maxRounds ?? Rollout.defaultConfig.maxRounds
  const bad = badMaxRounds(maxRounds)
  if (bad !== undefined) return Result.fail(bad)
  if (trajectory.taskId !== task.id) return fail("taskId", trajectory.taskId, `trajectory ${trajectory.id} is of task ${trajectory.taskId}, not ${task.id}`)
  const verdict = trajectory.verdict
  if (verdict === undefined) return fail("verdict", trajectory.id, `trajectory ${trajectory.id} is unjudged: a demonstration is a judged trajectory`)
  const last = trajectory.steps.at(-1)
  if (last === undefined) return fail("steps", trajectory.id, `trajectory ${trajectory.id} has no steps`)
  if (trajectory.steps.length > maxRounds) {
    return fail("maxRounds", String(maxRounds), `trajectory ${trajectory.id} has ${trajectory.steps.length} steps, more than maxRounds ${maxRounds}: give the T_max it ran with`)
  }
  for (const name of History.retrievedTools(trajectory.steps)) {
    if (options.lookup(name) === undefined) {
      return fail("tools", name, `trajectory ${trajectory.id} retrieved tool ${JSON.stringify(name)}, which the given library does not hold: export with the library the rollouts ran on`)
    }
  }
  const budgets: PolicyPrompt.HistoryBudgets = { ...PolicyPrompt.defaultBudgets, ...options.budgets }
  const context = Rollout.contextAt(trajectory, last.index, { request: task.request, maxRounds, lookup: options.lookup })
  const [reply] = OpenAiFormat.stepToMessages(last, options.mode)
  if (context === undefined || reply === undefined) return fail("steps", trajectory.id, `trajectory ${trajectory.id}: step ${last.index} is not at its position`)
  return Result.succeed({
    messages: [...PolicyPrompt.buildMessages(context, options.mode, budgets), reply],
    tools: options.mode === "native" ? PolicyPrompt.nativeTools(context.tools) : context.tools.map(OpenAiFormat.toolDefinition),
    id: trajectory.id,
    task_id: trajectory.taskId,
    level: task.level,
    paradigm: trajectory.paradigm,
    policy: trajectory.policy,
    mode: options.mode,
    verdict
  })
}

/**
 * Judge-filtered demonstrations: one line per kept trajectory ({@link demonstration}); unjudged trajectories, the
 * ones `keep` (default {@link passed}) refuses and empty ones are reported in `skipped`. Fails, naming the field and
 * value, on a trajectory of a task not in `tasks` or on any {@link demonstration} failure.
 */
export const demonstrations = (
  trajectories: ReadonlyArray<Trajectory>,
  options: DemonstrationOptions
): Result.Result<Exported<DemonstrationLine>, ExportError> => {
  const bad = badMaxRounds(options.maxRounds ?? Rollout.defaultConfig.maxRounds)
  if (bad !== undefined) return Result.fail(bad)
  const tasks = new Map(options.tasks.map((t) => [t.id as string, t] as const))
  const keep = options.keep ?? passed
  const lines: Array<DemonstrationLine> = []
  const skipped: Array<Skipped> = []
  for (const trajectory of trajectories) {
    const task = tasks.get(trajectory.taskId)
    if (task === undefined) {
      return Result.fail(new ExportError({
        field: "taskId",
        value: trajectory.taskId,
        message: `trajectory ${trajectory.id} is of task ${trajectory.taskId}, which is not among the given tasks`
      }))
    }
    if (trajectory.verdict === undefined) skipped.push({ id: trajectory.id, reason: "unjudged" })
    else if (trajectory.steps.length === 0) skipped.push({ id: trajectory.id, reason: "no_steps" })
    else if (!keep(trajectory, task)) skipped.push({ id: trajectory.id, reason: "not_kept" })
    else {
      const line = demonstration(trajectory, task, options)
      if (Result.isFailure(line)) return Result.fail(line.failure)
      lines.push(line.success)
    }
  }
  return Result.succeed({ lines, skipped })
}

// ---------------------------------------------------------------------------------------------------------------
// Experience (RL)

/** How experience is exported. */
export interface ExperienceOptions {
  /** The advantage estimator the trajectories were scored with (`Scoring` options' `estimator`): recorded on each line. */
  readonly estimator: string
  /** The group a trajectory was scored in; default `<task id>/<paradigm>` (how `Scoring.scoreGroup` is called per task). */
  readonly group?: (trajectory: Trajectory) => string
}

/** The default group of a trajectory: its task and paradigm. */
export const defaultGroup = (trajectory: Trajectory): string => `${trajectory.taskId}/${trajectory.paradigm}`

/** Whether every step carries a reward and an advantage and the trajectory its R_ans (what `Scoring.scoreGroup` writes). */
export const isScored = (trajectory: Trajectory): boolean =>
  trajectory.answerReward !== undefined && trajectory.steps.every((s) => s.reward !== undefined && s.advantage !== undefined)

const phaseRewardOf = (trajectory: Trajectory, step: Step): number | undefined =>
  trajectory.phases.find((p) => p.start <= step.index && step.index < p.end)?.reward?.rPhase

/**
 * RL experience: one line per step of every scored trajectory ({@link isScored}), in order; unscored trajectories
 * are reported in `skipped`. An unjudged trajectory that scoring masked is exported with its zero advantages and
 * R_ans 0. `group_index` is the trajectory's `groupIndex`, or else its position among the group's trajectories here.
 */
export const experience = (
  trajectories: ReadonlyArray<Trajectory>,
  options: ExperienceOptions
): Result.Result<Exported<ExperienceLine>, ExportError> => {
  if (options.estimator.trim() === "") {
    return Result.fail(new ExportError({ field: "estimator", value: options.estimator, message: "estimator must name the advantage estimator the trajectories were scored with" }))
  }
  const groupOf = options.group ?? defaultGroup
  const seenInGroup = new Map<string, number>()
  const lines: Array<ExperienceLine> = []
  const skipped: Array<Skipped> = []
  for (const trajectory of trajectories) {
    const group = groupOf(trajectory)
    const position = seenInGroup.get(group) ?? 0
    seenInGroup.set(group, position + 1)
    const answer = trajectory.answerReward
    if (answer === undefined || !isScored(trajectory)) {
      skipped.push({ id: trajectory.id, reason: "unscored" })
      continue
    }
    for (const step of trajectory.steps) {
      const reward = step.reward
      const advantage = step.advantage
      if (reward === undefined || advantage === undefined) continue
      const rPhase = phaseRewardOf(trajectory, step)
      lines.push({
        trajectory_id: trajectory.id,
        task_id: trajectory.taskId,
        group,
        group_index: trajectory.groupIndex ?? position,
        step: step.index,
        phase: step.phase,
        paradigm: trajectory.paradigm,
        policy: trajectory.policy,
        ...(step.decision !== undefined ? { version: step.decision.version } : {}),
        text: step.raw,
        ...(step.logprob !== undefined ? { logprob: step.logprob } : {}),
        ...(step.tokenLogprobs !== undefined ? { token_logprobs: step.tokenLogprobs } : {}),
        ...(step.prompt !== undefined ? { prompt: step.prompt } : {}),
        reward: {
          r_step: reward.rStep,
          r_base: reward.rBase,
          r_plan: reward.rPlan,
          ...(rPhase !== undefined ? { r_phase: rPhase } : {}),
          r_ans: answer.rAns
        },
        advantage: {
          traj: advantage.traj,
          phase: advantage.phase,
          step: advantage.step,
          combined: advantage.combined,
          ...(advantage.actions !== undefined ? { actions: advantage.actions } : {}),
          ...(advantage.plan !== undefined ? { plan: advantage.plan } : {})
        },
        estimator: options.estimator
      })
    }
  }
  return Result.succeed({ lines, skipped })
}

/**
 * What a rollout records: steps (turn, observations, timings, controller state), phases,
 * the judge's verdict, and the rewards and advantages computed from them.
 */
import { Schema } from "effect"
import { CallId, TaskId, ToolName, TrajectoryId } from "./Ids.ts"
import { Observation } from "./Call.ts"
import { Turn } from "./Turn.ts"

/** Controller state before a step (spec Table 8). */
export const ControllerState = Schema.Literals(["Need", "May", "No", "Answer"])
/** Controller state before a step. */
export type ControllerState = typeof ControllerState.Type

/** The phase a step belongs to. */
export const Phase = Schema.Literals(["explore", "execute"])
/** The phase a step belongs to. */
export type Phase = typeof Phase.Type

/** The agent paradigm a rollout ran under. */
export const Paradigm = Schema.Literals(["ParaAct", "ReAct", "ExploreThenExecute", "DFSDT"])
/** The agent paradigm a rollout ran under. */
export type Paradigm = typeof Paradigm.Type

/**
 * Why a rollout ended: `answer` the policy answered before the last round; `max_rounds` T_max forced the end (an
 * answer given at the forced last round included: the answer is kept, the rollout counts as truncated);
 * `policy_error` the policy failed or produced no turn; `interrupted` the rollout's time budget ran out.
 */
export const StopReason = Schema.Literals(["answer", "max_rounds", "policy_error", "interrupted"])
/** Why a rollout ended. */
export type StopReason = typeof StopReason.Type

/** One retrieved tool. */
export const SearchHit = Schema.Struct({ tool: ToolName, score: Schema.Finite })
/** One retrieved tool. */
export type SearchHit = typeof SearchHit.Type

/** What one search of a turn returned. */
export const SearchResult = Schema.Struct({
  slot: Schema.String,
  query: Schema.String,
  hits: Schema.Array(SearchHit),
  /**
   * Set when the retriever failed or timed out (a fault of the machinery: the hits are empty, and the search is not
   * charged to the agent as "found nothing").
   */
  error: Schema.optionalKey(Schema.String),
  /**
   * Set on a repeated query: which page of its ranking the hits are (2: ranks k+1 … 2k, a follow-up top-k); absent on a
   * query's first search.
   */
  page: Schema.optionalKey(Schema.Int.pipe(Schema.check(Schema.isGreaterThanOrEqualTo(2)))),
  startMs: Schema.Finite,
  endMs: Schema.Finite
})
/** What one search of a turn returned. */
export type SearchResult = typeof SearchResult.Type

/** Where a malformed turn broke: the tag and the character offset. */
export const ProtocolIssue = Schema.Struct({
  tag: Schema.String,
  offset: Schema.Finite,
  message: Schema.String
})
/** Where a malformed turn broke. */
export type ProtocolIssue = typeof ProtocolIssue.Type

/** The runtime's checks of a parsed turn (feeds r_base). */
export const StepValidation = Schema.Struct({
  /** Calls naming a tool the agent has not seen (neither retrieved nor called before). */
  unseenTools: Schema.Array(CallId),
  /** Calls whose arguments fail the tool schema, with the reason. */
  invalidArguments: Schema.Array(Schema.Struct({ callId: CallId, message: Schema.String })),
  /** Calls identical (tool + resolved arguments) to an earlier call. */
  repeatedCalls: Schema.Array(CallId),
  /** `$ref`s that point at no earlier successful call, or at a missing field. */
  unresolvedRefs: Schema.Array(Schema.Struct({ callId: CallId, ref: Schema.String })),
  /** The plan failed validation (unknown dep, cycle, duplicate id), with the reason. */
  planError: Schema.optionalKey(Schema.String),
  /**
   * Actions the paradigm did not allow this round (ReAct: all but the first; P1: searches after execution began),
   * labelled `search:<slot>` / `call:<id>`. They did not run: the reward neither credits nor charges them.
   */
  dropped: Schema.optionalKey(Schema.Array(Schema.String))
})
/** The runtime's checks of a parsed turn. */
export type StepValidation = typeof StepValidation.Type

/** A validation with nothing wrong. */
export const validStep: StepValidation = { unseenTools: [], invalidArguments: [], repeatedCalls: [], unresolvedRefs: [] }

/** Token usage of one policy call. */
export const Usage = Schema.Struct({ promptTokens: Schema.Finite, completionTokens: Schema.Finite })
/** Token usage of one policy call. */
export type Usage = typeof Usage.Type

/** Step-level reward (spec §3). */
export const StepReward = Schema.Struct({
  rBase: Schema.Finite,
  rPlan: Schema.Finite,
  rStep: Schema.Finite,
  /** The step's coverage term (src/math/Credit.ts), when it was mixed into R_step **[ours]**. */
  coverage: Schema.optionalKey(Schema.Finite),
  /** The answer step's F1 from the judge's counts, when it replaced r_plan's constant **[ours]**. */
  answer: Schema.optionalKey(Schema.Finite)
})
/** Step-level reward. */
export type StepReward = typeof StepReward.Type

/** Phase-level reward and its four components (spec §3). */
export const PhaseReward = Schema.Struct({
  l1: Schema.Finite,
  l2: Schema.Finite,
  l3: Schema.Finite,
  l4: Schema.Finite,
  rPhase: Schema.Finite,
  /** The phase's coverage of the task's gold calls (src/math/Credit.ts), when it was mixed into R_phase **[ours]**. */
  coverage: Schema.optionalKey(Schema.Finite)
})
/** Phase-level reward. */
export type PhaseReward = typeof PhaseReward.Type

/** The per-step advantage, by level and combined (spec §4). */
export const StepAdvantage = Schema.Struct({
  traj: Schema.Finite,
  phase: Schema.Finite,
  step: Schema.Finite,
  combined: Schema.Finite,
  /** Per-action credit **[ours]** (estimators that give it): each call's, then each search's advantage, in turn order. */
  actions: Schema.optionalKey(Schema.Array(Schema.Finite)),
  /** The plan bit's advantage (per-action credit; the step's combined advantage when it made no plan decision). */
  plan: Schema.optionalKey(Schema.Finite),
  /** The kind decision's advantage **[ours]** (estimators that judge it apart from the step; else the combined advantage). */
  kind: Schema.optionalKey(Schema.Finite)
})
/** The per-step advantage. */
export type StepAdvantage = typeof StepAdvantage.Type

/**
 * What a learned policy chose in a round, in the terms of its action space: enough for a trainer to rebuild the
 * candidate set (deterministically, from the round's context) and re-score the choice under new parameters.
 */
export const Decision = Schema.Struct({
  /** The parameter version that acted (the behaviour policy). */
  version: Schema.Finite,
  /** The chosen action kind ("search", "call", "answer") and its index among the round's available kinds. */
  kind: Schema.String,
  kindIndex: Schema.Finite,
  /** The chosen candidate rows of the scored matrix. */
  selected: Schema.Array(Schema.Finite),
  /** Whether the turn carried the plan. */
  plan: Schema.Boolean,
  /**
   * The chosen candidates were decoded from the scores, not sampled (an answer's facts chosen as evaluation chooses
   * them, during RL): they are no factor of the step's log-probability. Absent: sampled, or a greedy turn.
   */
  decoded: Schema.optionalKey(Schema.Boolean),
  /** Rows scored (kinds + plan + candidates). */
  rows: Schema.Finite,
  /** A digest of the feature matrix: a rebuilt action space must give the same digest. */
  digest: Schema.String
})
/** What a learned policy chose in a round. */
export type Decision = typeof Decision.Type

/**
 * One round of a rollout. Numbers are `Schema.Finite`: NaN and ±Infinity would not survive JSON (they are written as
 * null), so a trajectory that decodes is one that round-trips.
 */
export const Step = Schema.Struct({
  index: Schema.Finite,
  /** The policy's raw output for the round. */
  raw: Schema.String,
  /** The parsed turn, absent when the output was malformed. */
  turn: Schema.optionalKey(Turn),
  protocolError: Schema.optionalKey(ProtocolIssue),
  validation: StepValidation,
  controller: ControllerState,
  phase: Phase,
  searches: Schema.Array(SearchResult),
  observations: Schema.Array(Observation),
  /** ms since the rollout started. */
  startMs: Schema.Finite,
  policyMs: Schema.Finite,
  endMs: Schema.Finite,
  usage: Usage,
  /**
   * What was wrong with the policy's output besides its text, e.g. a non-finite token count or log-probability
   * (which JSON cannot carry): the value is dropped or zeroed and the problem recorded here, never lost.
   */
  outputIssues: Schema.optionalKey(Schema.Array(Schema.String)),
  /** Log-probability of the turn under the policy, when the policy can give one. */
  logprob: Schema.optionalKey(Schema.Finite),
  /** Per-token log-probabilities of the turn (LLM policies that return them). */
  tokenLogprobs: Schema.optionalKey(Schema.Array(Schema.Finite)),
  /** The exact prompt the policy was given (LLM policies: the serialised messages), for re-scoring. */
  prompt: Schema.optionalKey(Schema.String),
  /** A learned policy's choice in its action space (see {@link Decision}). */
  decision: Schema.optionalKey(Decision),
  /** DFSDT only: the index of the step this one expands (absent for a root expansion and in linear paradigms). */
  parent: Schema.optionalKey(Schema.Finite),
  reward: Schema.optionalKey(StepReward),
  advantage: Schema.optionalKey(StepAdvantage)
})
/** One round of a rollout. */
export type Step = typeof Step.Type

/** A maximal run of steps of one phase: steps [start, end). */
export const PhaseSpan = Schema.Struct({
  kind: Phase,
  start: Schema.Finite,
  end: Schema.Finite,
  reward: Schema.optionalKey(PhaseReward)
})
/** A maximal run of steps of one phase. */
export type PhaseSpan = typeof PhaseSpan.Type

/** A judge's grade for one criterion. */
export const Grade = Schema.Literals(["YES", "PARTIAL", "NO"])
/** A judge's grade. */
export type Grade = typeof Grade.Type

/** The judge's three verdicts on a trajectory (spec §5). */
export const Verdict = Schema.Struct({
  quality: Grade,
  faithfulness: Grade,
  utility: Grade,
  rationale: Schema.optionalKey(Schema.String),
  judge: Schema.String,
  /**
   * What the judge counted, when it counts **[ours]**: the gold facts checked, those the answer states, and the
   * answer's factual claims that state no requested fact (nor come from the request). The answer-step reward reads
   * them (src/math/Credit.ts); they name no gold value.
   */
  counts: Schema.optionalKey(Schema.Struct({ facts: Schema.Finite, stated: Schema.Finite, unrequested: Schema.Finite }))
})
/** The judge's three verdicts. */
export type Verdict = typeof Verdict.Type

/** The trajectory-level reward: the Q/F/U bit pattern and R_ans. */
export const AnswerReward = Schema.Struct({ pattern: Schema.String, rAns: Schema.Finite })
/** The trajectory-level reward. */
export type AnswerReward = typeof AnswerReward.Type

/** One rollout of a task. */
export const Trajectory = Schema.Struct({
  id: TrajectoryId,
  taskId: TaskId,
  paradigm: Paradigm,
  /** A label of the policy that produced it (model name, "teacher", ...). */
  policy: Schema.String,
  seed: Schema.Finite,
  /** Index within its GRPO group, when rolled out as a group. */
  groupIndex: Schema.optionalKey(Schema.Finite),
  steps: Schema.Array(Step),
  phases: Schema.Array(PhaseSpan),
  answer: Schema.optionalKey(Schema.String),
  stop: StopReason,
  /** Why the rollout ended early (policy failure, timeout), when it did. */
  error: Schema.optionalKey(Schema.String),
  /** Wall-clock start (epoch ms) and duration. */
  startedAt: Schema.Finite,
  durationMs: Schema.Finite,
  verdict: Schema.optionalKey(Verdict),
  answerReward: Schema.optionalKey(AnswerReward)
})
/** One rollout of a task. */
export type Trajectory = typeof Trajectory.Type

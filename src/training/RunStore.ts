/**
 * The RunStore service: what a training run must not lose to a crash — its config and status, every finished group of
 * trajectories, per-iteration metrics, checkpoints (parameters, optimiser moments, RNG / iteration state) and the
 * results of finished stages — so `--resume <run>` continues from the last checkpoint. Layer: layers/storage/RunStoreSqlite.ts.
 */
import { Context, Schema } from "effect"
import type { Effect } from "effect"
import type { Json } from "../domain/Json.ts"
import type { Trajectory } from "../domain/Trajectory.ts"

/** The store could not be opened, read or written, or a stored row does not decode: which file, and what (naming the row). */
export class RunStoreError extends Schema.TaggedError<RunStoreError>()("RunStoreError", {
  /** The store's resolved file (`:memory:` for an in-memory store). */
  path: Schema.String,
  message: Schema.String
}) {}

/** Where a run stands: `running` from creation until the trainer sets `done` or `failed`. */
export const RunStatus = Schema.Literals(["running", "done", "failed"])
/** Where a run stands. */
export type RunStatus = typeof RunStatus.Type

/** A stored run. */
export interface RunInfo {
  readonly id: string
  readonly config: Json
  /** Epoch ms (the Effect clock's) at `createRun`. */
  readonly createdAt: number
  readonly status: RunStatus
}

/** Whether `putTrajectories` wrote its group, or found the key already stored (and wrote nothing). */
export type PutOutcome = "inserted" | "existed"

/** One stored group of trajectories: its key, the iteration it was put at, and how many trajectories it holds. */
export interface GroupInfo {
  readonly key: string
  readonly iteration: number
  readonly size: number
}

/** Which trajectories or groups of a stage to read; absent fields do not filter. */
export interface TrajectoryFilter {
  readonly iteration?: number
}

/** A stage's metrics at one iteration. */
export interface IterationMetrics {
  readonly iteration: number
  readonly metrics: Json
}

/** What a trainer needs to continue exactly where it stopped: parameters, optimiser moments, and its own state. */
export interface Checkpoint {
  readonly params: Float64Array
  /** The optimiser's buffers in a fixed order (e.g. Adam's m and v); each may have its own length. */
  readonly optimiser: ReadonlyArray<Float64Array>
  /** Iteration counters, the RNG state, anything else the trainer resumes from. */
  readonly state: Json
}

/** A checkpoint read back from the store. */
export interface StoredCheckpoint extends Checkpoint {
  readonly iteration: number
  /** Epoch ms (the Effect clock's) at `putCheckpoint`. */
  readonly createdAt: number
}

/** How many rows of each kind `deleteAfter` dropped. */
export interface Deleted {
  readonly groups: number
  readonly trajectories: number
  readonly metrics: number
  readonly checkpoints: number
}

/**
 * The run store. Stages are free-form names ("sft", "rl"); iterations are non-negative integers. Writes to a run that
 * does not exist fail with a RunStoreError; reads of one find nothing. Its one implementation (layers/storage/RunStoreSqlite.ts)
 * imports this class, so no default layer sits on it: `RunStoreSqlite.layer(path)` or `RunStoreSqlite.layerMemory`.
 */
export class RunStore extends Context.Service<RunStore, {
  /** Creates a run with status `running`; fails if a run with this id exists. */
  readonly createRun: (id: string, config: Json) => Effect.Effect<RunInfo, RunStoreError>
  /** The run, or undefined when there is none with this id. */
  readonly getRun: (id: string) => Effect.Effect<RunInfo | undefined, RunStoreError>
  /** Sets a run's status; fails if the run does not exist. */
  readonly setStatus: (id: string, status: RunStatus) => Effect.Effect<void, RunStoreError>
  /** Every run, oldest first. */
  readonly listRuns: () => Effect.Effect<ReadonlyArray<RunInfo>, RunStoreError>

  /**
   * Stores one group of trajectories (e.g. one task's GRPO group) in one transaction: all of it lands or none does.
   * Idempotent per (run, stage, key): when the key is already stored nothing is written or replaced (even if the
   * trajectories or the iteration differ) and the answer is `"existed"` — not an error, so a resumed trainer can
   * re-put what it is unsure about.
   */
  readonly putTrajectories: (
    run: string,
    stage: string,
    key: string,
    iteration: number,
    trajectories: ReadonlyArray<Trajectory>
  ) => Effect.Effect<PutOutcome, RunStoreError>
  /** A stage's trajectories in insertion order (groups in put order, each group's trajectories in its order). */
  readonly trajectories: (run: string, stage: string, filter?: TrajectoryFilter) => Effect.Effect<ReadonlyArray<Trajectory>, RunStoreError>
  /** A stage's stored groups in put order: which keys a resumed trainer need not roll out again. */
  readonly groups: (run: string, stage: string, filter?: TrajectoryFilter) => Effect.Effect<ReadonlyArray<GroupInfo>, RunStoreError>

  /** Stores a stage's metrics at an iteration, replacing any stored for that iteration (the last write is the truth). */
  readonly putMetrics: (run: string, stage: string, iteration: number, metrics: Json) => Effect.Effect<void, RunStoreError>
  /** A stage's metrics, by iteration ascending. */
  readonly metrics: (run: string, stage: string) => Effect.Effect<ReadonlyArray<IterationMetrics>, RunStoreError>

  /**
   * Stores a checkpoint (replacing one of the same iteration) and, when given, that iteration's metrics (as
   * `putMetrics`) in one transaction: a checkpoint never lands without its metrics. Arrays are stored as raw
   * little-endian float64 bytes and read back bit-exactly.
   */
  readonly putCheckpoint: (
    run: string,
    stage: string,
    iteration: number,
    checkpoint: Checkpoint,
    metrics?: Json
  ) => Effect.Effect<void, RunStoreError>
  /** The checkpoint of the highest iteration of a stage, or undefined when it has none. */
  readonly latestCheckpoint: (run: string, stage: string) => Effect.Effect<StoredCheckpoint | undefined, RunStoreError>
  /** The checkpoint of one iteration, or undefined. */
  readonly checkpoint: (run: string, stage: string, iteration: number) => Effect.Effect<StoredCheckpoint | undefined, RunStoreError>

  /** Records a stage as finished with its result (replacing an earlier one): a resume skips finished stages. */
  readonly markStage: (run: string, stage: string, result: Json) => Effect.Effect<void, RunStoreError>
  /** A finished stage's result, or undefined while it is unfinished. */
  readonly stageResult: (run: string, stage: string) => Effect.Effect<Json | undefined, RunStoreError>

  /**
   * Drops, in one transaction, a stage's groups (with their trajectories), metrics and checkpoints of every iteration
   * after `iteration`: what a resume does before redoing the iteration interrupted after its last checkpoint. The
   * stage's result (`markStage`) is kept.
   */
  readonly deleteAfter: (run: string, stage: string, iteration: number) => Effect.Effect<Deleted, RunStoreError>
}>()("paraagent/RunStore") {}

/**
 * The teacher's four roles (planner, searcher, executor, answerer) as an interface: what each sees and what piece
 * of the turn it hands back. The scripted roles and the LLM roles (layers/model/TeacherLlm.ts) both implement it.
 */
import type { Effect } from "effect"
import type { ToolName } from "../../domain/Ids.ts"
import type { JsonObject } from "../../domain/Json.ts"
import type { Plan, PlanNode } from "../../domain/Plan.ts"
import type { Task } from "../../domain/Task.ts"
import type { SearchQuery } from "../../domain/Turn.ts"
import type { Rng } from "../../math/Random.ts"
import type { PolicyContext } from "../Policy.ts"
import type { Board, BoundNode } from "./Board.ts"

/** The four roles. */
export type RoleName = "plan" | "search" | "execute" | "answer"

/** The roles in the order a round consults them. */
export const roleNames: ReadonlyArray<RoleName> = ["plan", "search", "execute", "answer"]

/** What a role sees: the rollout's context, the task (privileged), the board, and the round's random stream. */
export interface RoleInput {
  readonly context: PolicyContext
  readonly task: Task
  readonly board: Board
  /** Scripted roles draw their mistakes from it, in the order the orchestrator consults them. */
  readonly random: Rng
}

/** A role's piece of the turn, with an optional line of reasoning for the turn's `<think>`. */
export interface Piece<A> {
  readonly value: A
  readonly note?: string
}

/** One call the executor decided to make: a ready node and its arguments (ids are assigned by the orchestrator). */
export interface NodeCall {
  readonly node: BoundNode
  readonly arguments: JsonObject
  /** The tool called, when the executor picked another retrieved tool than the node's (a mistake); else the node's. */
  readonly tool?: ToolName
}

/** The roles the orchestrator consults. */
export interface Roles<E = never, R = never> {
  /**
   * `gold`: the orchestrator follows the task's gold DAG and the planner's plan is only shown (scripted roles);
   * `emitted`: it follows the latest plan the planner emitted on the path, revising it when needed (LLM roles).
   */
  readonly follows: "gold" | "emitted"
  /** A plan DAG of capability slots. */
  readonly plan: (input: RoleInput) => Effect.Effect<Piece<Plan>, E, R>
  /** One query per slot (the node that names it) still lacking a tool. */
  readonly search: (input: RoleInput, slots: ReadonlyArray<PlanNode>) => Effect.Effect<Piece<ReadonlyArray<SearchQuery>>, E, R>
  /** Calls for ready nodes; an empty list means none can be made now. */
  readonly execute: (input: RoleInput, ready: ReadonlyArray<BoundNode>) => Effect.Effect<Piece<ReadonlyArray<NodeCall>>, E, R>
  /** The final answer. */
  readonly answer: (input: RoleInput) => Effect.Effect<Piece<string>, E, R>
}

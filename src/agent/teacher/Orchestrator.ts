/**
 * The teacher's orchestrator: each round it reads the board, consults the planner when a plan is due, takes the
 * first action its paradigm's strategy offers, and asks the matching role for it — one ordinary ParaAct turn.
 */
import { Effect } from "effect"
import type { CallId } from "../../domain/Ids.ts"
import type { Plan, PlanNode } from "../../domain/Plan.ts"
import type { Task } from "../../domain/Task.ts"
import type { Paradigm } from "../../domain/Trajectory.ts"
import type { Turn } from "../../domain/Turn.ts"
import * as PlanMath from "../../math/PlanDag.ts"
import { hashParts, rng } from "../../math/Random.ts"
import * as ParaAct from "../../protocol/ParaAct.ts"
import type { PolicyContext, PolicyOutput } from "../Policy.ts"
import { type Board, latestPlan, readBoard } from "./Board.ts"
import type { TeacherOptions } from "./Options.ts"
import type { RoleInput, Roles } from "./Roles.ts"
import { decide, needsRevision } from "./Strategies.ts"

/** The id of a node's next call: the node id on a first try, else a retry id `<node>_r<round>`. */
export const callIdFor = (node: PlanNode, board: Board, round: number): CallId =>
  ((board.attempts.get(node.id) ?? 0) === 0 && !board.usedIds.has(node.id) ? node.id : `${node.id}_r${round}`) as CallId

/** Free text fit for `<think>` / `<answer>`: no closing tag of its own, no surrounding whitespace. */
export const cleanText = (text: string, tag: "think" | "answer"): string => text.split(ParaAct.closeTag(tag)).join(" ").trim()

const thinkOf = (fallback: string, notes: ReadonlyArray<string | undefined>): string => {
  const text = cleanText(notes.filter((n): n is string => n !== undefined && n.trim() !== "").join(" "), "think")
  return text === "" ? fallback : text
}

/** The board restricted to the nodes a plan has (the gold DAG's deps kept: execution still waits for them). */
export const withinPlan = (board: Board, plan: Plan): Board => {
  const ids = new Set<string>(plan.nodes.map((n) => n.id))
  return board.nodes.every((n) => ids.has(n.id)) ? board : { ...board, nodes: board.nodes.filter((n) => ids.has(n.id)) }
}

/**
 * Whether the plan in force leaves out gold nodes the outputs have not covered. When nothing is left to do on that
 * plan, the outputs are all in and hold nothing for that part of the request: the planner is consulted again.
 */
const overlooksGold = (board: Board): boolean => board.gold.some((g) => !board.nodes.some((n) => n.id === g.id) && !board.goldDone.has(g.id))

/** The paradigms in which a teacher that follows the gold DAG shows its plan. */
const showsPlan: ReadonlySet<Paradigm> = new Set(["ParaAct", "ExploreThenExecute"])

/**
 * The teacher's next turn: reads the board, consults the planner when a plan is due, picks the round's action with
 * {@link decide}, and asks the role for it. Roles are consulted in order plan → search | execute → answer, so the
 * scripted roles draw from the round's random stream in a fixed order.
 */
export const nextTurn = <E, R>(context: PolicyContext, task: Task, roles: Roles<E, R>, options: TeacherOptions): Effect.Effect<Turn, E, R> =>
  Effect.gen(function*() {
    const abandoned = context.abandoned ?? []
    const random = rng(hashParts(context.seed, task.id, context.round, context.history.length))
    const shownPlan = latestPlan(context.history)
    const emitted = roles.follows === "gold" ? undefined : shownPlan
    const nodesOf = (plan: Plan | undefined) => roles.follows === "gold" ? undefined : (plan?.nodes ?? [])
    // Following the gold DAG, the teacher works on the nodes its shown plan has: a part the planner overlooked stays
    // out until the outputs show it is missing.
    const read = (plan: Plan | undefined) => {
      const full = readBoard(task, context.history, abandoned, nodesOf(roles.follows === "gold" ? undefined : plan))
      return roles.follows === "gold" && plan !== undefined ? withinPlan(full, plan) : full
    }
    let board = read(shownPlan?.plan)
    const input = (): RoleInput => ({ context, task, board, random })
    const answer = (notes: ReadonlyArray<string | undefined>) =>
      Effect.map(roles.answer(input()), (piece): Turn => ({
        think: thinkOf("Every step I can take is done; answering.", [...notes, piece.note]),
        searches: [],
        calls: [],
        answer: cleanText(piece.value, "answer")
      }))
    if (context.controller === "Answer") return yield* answer([])
    const planDue = roles.follows === "gold"
      ? (!board.planned && showsPlan.has(context.paradigm)) || (overlooksGold(board) && decide(board, context.paradigm, options).length === 0)
      : emitted === undefined || needsRevision(board, emitted, options)
    const planned = planDue ? yield* roles.plan(input()) : undefined
    if (planned !== undefined) board = read(planned.value)
    // A revision identical to the plan in force (ids, tools, deps: the reward's identity) is not shown again, since a
    // repeated plan earns no plan credit; the plan in force stays.
    const shown = planned !== undefined && !(emitted !== undefined && PlanMath.samePlan(emitted.plan, planned.value)) ? planned : undefined
    const planNote = shown?.note
    const withPlan = (turn: Turn): Turn => (shown === undefined ? turn : { ...turn, plan: shown.value })
    for (const action of decide(board, context.paradigm, options)) {
      if (action._tag === "Search") {
        const piece = yield* roles.search(input(), action.slots)
        if (piece.value.length === 0) continue
        return withPlan({ think: thinkOf(action.think, [planNote, piece.note]), searches: piece.value, calls: [] })
      }
      const piece = yield* roles.execute(input(), action.nodes)
      if (piece.value.length === 0) continue
      const calls = piece.value.map((c) => ({ id: callIdFor(c.node, board, context.round), tool: c.tool ?? c.node.tool, arguments: c.arguments }))
      return withPlan({ think: thinkOf(action.think, [planNote, piece.note]), searches: [], calls })
    }
    return yield* answer([planNote])
  })

/** The turn as the policy's output: its canonical text, the structured turn, and the usage of the round. */
export const toOutput = (turn: Turn, usage: PolicyOutput["usage"]): PolicyOutput => ({ text: ParaAct.printTurn(turn), turn, usage })

/**
 * The LLM teacher's replies: each role's JSON reply decoded with Schema and checked against the board (known
 * tools, ready nodes, plan ids), giving the role's piece of the turn or a one-line reason to ask for a repair.
 */
import { Result, Schema } from "effect"
import type { CallId, ToolName } from "../../src/domain/Ids.ts"
import type { Plan, PlanNode } from "../../src/domain/Plan.ts"
import type { Step } from "../../src/domain/Trajectory.ts"
import type { SearchQuery } from "../../src/domain/Turn.ts"
import { extractJsonObject } from "../../src/judge/Prompt.ts"
import * as PlanMath from "../../src/math/PlanDag.ts"
import * as Refs from "../../src/protocol/Refs.ts"
import * as Teacher from "../../src/agent/Teacher.ts"
import type { BoundNode, NodeCall, Piece } from "../../src/agent/Teacher.ts"
import type { Library } from "../../src/toolenv/ToolLibrary.ts"

const Reason = Schema.optionalKey(Schema.NullOr(Schema.String))

/** The planner's reply. */
export const PlannerReply = Schema.Struct({
  reason: Reason,
  nodes: Schema.Array(Schema.Struct({
    id: Schema.String,
    slot: Schema.optionalKey(Schema.NullOr(Schema.String)),
    tool: Schema.optionalKey(Schema.NullOr(Schema.String)),
    deps: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.String)))
  }))
})

/** The searcher's reply. */
export const SearcherReply = Schema.Struct({
  reason: Reason,
  queries: Schema.Array(Schema.Struct({ slot: Schema.String, query: Schema.String }))
})

/** The executor's reply. */
export const ExecutorReply = Schema.Struct({
  reason: Reason,
  calls: Schema.Array(Schema.Struct({ node: Schema.String, arguments: Schema.JsonObject }))
})

/** The answerer's reply. */
export const AnswererReply = Schema.Struct({ reason: Reason, answer: Schema.String })

/** Reads a reply's content into a role's piece, or says what is wrong with it. */
export type Reader<A> = (content: string) => Result.Result<Piece<A>, string>

const decodeWith = <S extends Schema.Decoder<unknown>>(schema: S) => {
  const decode = Schema.decodeUnknownResult(Schema.fromJsonString(schema))
  return (content: string): Result.Result<S["Type"], string> =>
    content.trim() === ""
      ? Result.fail("the reply is empty")
      : Result.mapError(decode(extractJsonObject(content)), (error) => error.message)
}

const note = (reason: string | null | undefined): { readonly note?: string } =>
  reason === undefined || reason === null || reason.trim() === "" ? {} : { note: reason.trim() }

const nodeIdPattern = /^[A-Za-z_][A-Za-z0-9_]{0,31}$/

const decodePlanner = decodeWith(PlannerReply)

/**
 * The planner's reply as a plan: 1–32 nodes with well-formed ids, a valid DAG, tools that exist in the library (a
 * name that does not is dropped, leaving the slot open), and no id reused for a tool other than the one it ran.
 */
export const readPlan = (library: Library, history: ReadonlyArray<Step>): Reader<Plan> => (content) =>
  Result.flatMap(decodePlanner(content), (reply) => {
    if (reply.nodes.length === 0 || reply.nodes.length > 32) return Result.fail(`"nodes" must hold 1 to 32 nodes, got ${reply.nodes.length}`)
    const ran = new Map<string, string>()
    for (const step of history) for (const o of step.observations) if (o.attempts > 0) ran.set(Teacher.nodeIdOf(o.callId), o.tool)
    const nodes: Array<PlanNode> = []
    for (const [i, raw] of reply.nodes.entries()) {
      for (const id of [raw.id, ...(raw.deps ?? [])]) {
        if (!nodeIdPattern.test(id) || /_r\d+$/.test(id)) {
          return Result.fail(`nodes[${i}]: id ${JSON.stringify(id)} must be a letter or _ followed by at most 31 letters, digits or _, not ending in _r and digits`)
        }
      }
      const named = raw.tool === undefined || raw.tool === null || raw.tool.trim() === "" ? undefined : raw.tool.trim()
      const tool = named !== undefined && library.get(named) !== undefined ? named : undefined
      const before = ran.get(raw.id)
      if (before !== undefined && tool !== before) {
        return Result.fail(`nodes[${i}]: node ${raw.id} already ran tool ${before}; keep that tool for it, or give the new capability a new id`)
      }
      const slot = raw.slot === undefined || raw.slot === null || raw.slot.trim() === "" ? undefined : raw.slot.trim()
      nodes.push({
        id: raw.id as CallId,
        ...(tool === undefined ? {} : { tool: tool as ToolName }),
        ...(slot === undefined ? {} : { slot }),
        deps: [...new Set(raw.deps ?? [])] as Array<CallId>
      })
    }
    const plan: Plan = { nodes }
    const checked = PlanMath.validate(plan)
    if (checked._tag === "Invalid") return Result.fail(`the plan is not a DAG: ${PlanMath.describeIssues(checked.issues)}`)
    return Result.succeed({ value: plan, ...note(reply.reason) })
  })

const decodeSearcher = decodeWith(SearcherReply)

/** The searcher's reply: exactly one non-blank query per requested slot, returned in the slots' order. */
export const readSearch = (slots: ReadonlyArray<PlanNode>): Reader<ReadonlyArray<SearchQuery>> => (content) =>
  Result.flatMap(decodeSearcher(content), (reply) => {
    const wanted = slots.map((s) => s.id as string)
    const byslot = new Map<string, string>()
    for (const [i, q] of reply.queries.entries()) {
      if (!wanted.includes(q.slot)) return Result.fail(`queries[${i}]: slot ${JSON.stringify(q.slot)} is not one of ${wanted.join(", ")}`)
      if (byslot.has(q.slot)) return Result.fail(`queries[${i}]: slot ${q.slot} has a query already; give one per slot`)
      if (q.query.trim() === "") return Result.fail(`queries[${i}]: the query for ${q.slot} is blank`)
      byslot.set(q.slot, q.query.replace(/\s+/g, " ").trim())
    }
    const missing = wanted.filter((s) => !byslot.has(s))
    if (missing.length > 0) return Result.fail(`no query for slot(s) ${missing.join(", ")}: give exactly one per slot`)
    return Result.succeed({ value: wanted.map((slot) => ({ slot, query: byslot.get(slot) as string })), ...note(reply.reason) })
  })

const decodeExecutor = decodeWith(ExecutorReply)

/**
 * The executor's reply: at least one call, each for a distinct ready node, with well-formed `$ref`s; refs to a node id
 * are rewritten to the call that completed it.
 */
export const readExecute = (ready: ReadonlyArray<BoundNode>, done: Teacher.Board["done"]): Reader<ReadonlyArray<NodeCall>> => (content) =>
  Result.flatMap(decodeExecutor(content), (reply) => {
    if (reply.calls.length === 0) return Result.fail(`"calls" is empty: give a call for at least one of ${ready.map((n) => n.id).join(", ")}`)
    const out: Array<NodeCall> = []
    for (const [i, c] of reply.calls.entries()) {
      const node = ready.find((n) => n.id === c.node)
      if (node === undefined) return Result.fail(`calls[${i}]: node ${JSON.stringify(c.node)} is not ready; the ready nodes are ${ready.map((n) => n.id).join(", ")}`)
      if (out.some((o) => o.node.id === node.id)) return Result.fail(`calls[${i}]: node ${node.id} has a call already; give one per node`)
      const malformed = Refs.collectRefs(c.arguments).find((s) => s._tag === "Malformed")
      if (malformed !== undefined && malformed._tag === "Malformed") {
        return Result.fail(`calls[${i}].arguments: malformed $ref ${JSON.stringify(malformed.ref)}: ${malformed.message}`)
      }
      out.push({ node, arguments: Teacher.rewriteRefs(c.arguments, done) })
    }
    return Result.succeed({ value: out, ...note(reply.reason) })
  })

const decodeAnswerer = decodeWith(AnswererReply)

/** The answerer's reply: a non-blank answer. */
export const readAnswer: Reader<string> = (content) =>
  Result.flatMap(decodeAnswerer(content), (reply) =>
    Teacher.cleanText(reply.answer, "answer") === ""
      ? Result.fail(`"answer" is blank`)
      : Result.succeed({ value: reply.answer.trim(), ...note(reply.reason) }))

/**
 * The learned policy's action space: from a round's context alone (request, history, seen tools — never the gold
 * task) the candidate searches, calls and answer facts, each a row of features, laid out for the turn distribution.
 * Pure and deterministic: the same context gives the same rows, so a trainer rebuilds a recorded step's space.
 * The candidates of each kind are enumerated in `src/agent/actions/`; this module lays them out, turns a choice into
 * a turn and projects a recorded turn back onto the space.
 */
import type { ToolCall } from "../domain/Call.ts"
import { callId, toolName } from "../domain/Ids.ts"
import type { CallId } from "../domain/Ids.ts"
import type { Plan } from "../domain/Plan.ts"
import type { Turn } from "../domain/Turn.ts"
import type { Json, JsonObject } from "../domain/Json.ts"
import { callKey, canonicalJson } from "../math/CanonicalJson.ts"
import * as Refs from "../protocol/Refs.ts"
import { hash32, hash32Bytes } from "../math/Random.ts"
import type { Choice, KindSlot, Layout } from "../math/TurnDistribution.ts"
import { callCandidates } from "./actions/Calls.ts"
import { contextFeatures, readinessFeatures } from "./actions/ContextFeatures.ts"
import { answerRows, factCandidates, renderAnswer } from "./actions/Facts.ts"
import { read } from "./actions/Reading.ts"
import { searchCandidates } from "./actions/Searches.ts"
import { cover, tokens } from "./actions/Text.ts"
import { candidateWidth, contextWidth, defaultSpaceOptions } from "./actions/Types.ts"
import type { CallCandidate, FactCandidate, Kind, SearchCandidate, SpaceContext, SpaceOptions } from "./actions/Types.ts"

export type { CallCandidate, FactCandidate, FillSource, Kind, SearchCandidate, SpaceContext, SpaceOptions } from "./actions/Types.ts"
export { defaultSpaceOptions } from "./actions/Types.ts"
export { attributesAsked, clauseQueries, clausesOf, headPhrase, literalsOf, recordsAsked, requestedValues } from "./actions/Request.ts"
export type { Literal } from "./actions/Request.ts"
export { resolvePreview } from "./actions/Calls.ts"
export { headWords, renderAnswer } from "./actions/Facts.ts"

/** A round's action space. */
export interface Space {
  readonly layout: Layout
  /** rows × {@link width}, row-major. */
  readonly features: Float64Array
  /** The kind of each entry of `layout.kinds`. */
  readonly kinds: ReadonlyArray<Kind>
  readonly searches: ReadonlyArray<SearchCandidate>
  readonly calls: ReadonlyArray<CallCandidate>
  readonly facts: ReadonlyArray<FactCandidate>
  /** The first call id a new call may take (`c<n>`), and the ids already used. */
  readonly usedCallIds: ReadonlyArray<CallId>
  readonly clauses: ReadonlyArray<string>
  /** The successful calls so far with the calls their `$ref`s read: the nodes a call turn's plan builds on. */
  readonly priorCalls: ReadonlyArray<{ readonly id: CallId; readonly tool: string; readonly deps: ReadonlyArray<CallId> }>
  /** The request (the clauses joined), for reading which argument values it determines. */
  readonly request: string
}

// ---------------------------------------------------------------------------------------------------------------
// Feature layout: row type one-hot | context | candidate block.

const rowTypes = ["kind:search", "kind:call", "kind:answer", "plan", "search", "call", "fact"] as const
type RowType = typeof rowTypes[number]

/**
 * Width of a feature row: row type, context, and the row's own candidate block (zeros for kind and plan rows). What the
 * rest of the set offers is not in the row: the scoring network pools it from the rows of the set the row reads
 * (`layout.sets`: a kind row and its candidates read the kind's candidates, the plan row all candidates, a fact the
 * facts of its clause), so no row is scored blind to the rest.
 */
export const width = rowTypes.length + contextWidth + candidateWidth

/** Where a row's candidate block starts (the columns the identity encoder of the fixed-summary scorer pools). */
export const candidateOffset = rowTypes.length + contextWidth

/**
 * What each column of a feature row means, and the bounds of the enumeration: a model is trained on one schema and
 * is wrong on another of the same width. `revision` is bumped whenever a column's meaning or an enumerator changes;
 * a checkpoint records the schema's hash and the loader refuses a model of another (`layers/onnx/PolicyScorerOnnx.ts`).
 */
export const featureSchema = {
  revision: 9,
  sets: "a kind row and the kind's search or call candidates read the kind's candidates; the answer row reads every fact, a fact the facts of its clause; the plan row reads every candidate",
  rowTypes,
  context: [
    "round / T_max", "last round", "controller Need", "controller May", "controller No", "controller Answer", "clauses covered", "clauses searched",
    "last step: a success", "last step: a transient failure", "last step: a hard failure", "last step searched", "last step called", "tools seen / 12",
    "successes / 6", "a plan in force", "clauses / 4", "one action a round (ReAct, DFSDT)", "Explore-then-Execute", "first round or malformed last",
    "clauses with a likely answer among the facts", "clauses with a fact whose key meets them", "last step brought facts", "facts / the fact bound"
  ],
  search: [
    "clause searched (/2)", "clause succeeded", "clause attempted", "clause has a literal", "clause position", "a re-search", "after a success",
    "the whole clause", "a phrase of the clause", "an entity hop", "a provider's endpoints", "clause met a 400/404", "query covers the clause",
    "query asked before", "search <noun> by name", "pages of the query searched (/4)", "a tool the query brought not yet called"
  ],
  call: [
    "rank 1", "rank 2", "rank 3", "retrieval score", "tool words cover the clause", "required filled", "required (/4)", "literal share", "ref share",
    "enum/default share", "mean match", "min match", "arguments valid", "settled before", "failed transiently before", "tool failed hard",
    "clause succeeded", "tool succeeded", "filling variant", "found by a re-search", "no clause", "no required parameter", "clause has a literal",
    "an id given a literal", "literals of another clause", "literals no successful call carried yet"
  ],
  fact: [
    "key path covers the clause", "key path covers the request", "id-like key", "name-like key", "number", "item index (/4)", "within the count asked",
    "depth (/5)", "echo of the request", "in a list", "output consumed by a $ref", "length (/60)", "rank among the call's facts", "own key covers the clause",
    "own key inside the clause", "best key of the call", "yes/no", "clause covered by the key", "own key inside the request", "clause asks a list",
    "a counted item's display field", "the attribute asked", "display field",
    "clause's head named by the key path", "own key inside the clause's head", "best head key of the call",
    "its record holds the clause's quoted value", "its record holds only another clause's quoted value"
  ],
  options: defaultSpaceOptions
} as const

/** A short hash of {@link featureSchema} (FNV-style `hash32` of its JSON, hex): what a checkpoint records and the loader checks. */
export const featureSchemaHash: string = hash32(JSON.stringify(featureSchema)).toString(16).padStart(8, "0")

/** Builds a round's action space from the policy's context. */
export const build = (context: SpaceContext, options: SpaceOptions = defaultSpaceOptions): Space => {
  const r = read(context)
  const { history, single } = r
  const ctx = contextFeatures(context, r)
  const { searches, features: searchFeatures } = searchCandidates(context, r)
  const { calls, features: callFeatures } = callCandidates(r, options)
  const { facts, features: factFeatures } = factCandidates(context, r, options)
  readinessFeatures(ctx, r, facts, factFeatures, options.factsTotal)
  const clauses = r.clauses

  // --- layout: kind rows, the plan row, then candidate rows
  const kinds: Array<Kind> = []
  if (searches.length > 0 && context.controller !== "Answer") kinds.push("search")
  if (calls.length > 0 && context.controller !== "Answer") kinds.push("call")
  kinds.push("answer")
  const planRow = kinds.length
  const kindRows = kinds.length + 1
  const groups: Record<Kind, ReadonlyArray<Float64Array>> = { search: searchFeatures, call: callFeatures, answer: factFeatures }
  const typeOf: Record<Kind, RowType> = { search: "search", call: "call", answer: "fact" }
  let next = kindRows
  const slots: Array<KindSlot> = kinds.map((kind, row) => {
    const count = groups[kind].length
    const slot: KindSlot = {
      row,
      start: next,
      end: next + count,
      mode: count === 0 ? "none" : single && kind !== "answer" ? "one" : "subset",
      plan: kind !== "answer"
    }
    next += count
    return slot
  })
  const rows = next
  const features = new Float64Array(rows * width)
  const put = (row: number, type: RowType, candidate?: Float64Array): void => {
    const base = row * width
    features[base + rowTypes.indexOf(type)] = 1
    features.set(ctx, base + rowTypes.length)
    if (candidate !== undefined) features.set(candidate, base + rowTypes.length + contextWidth)
  }
  kinds.forEach((kind, row) => put(row, `kind:${kind}` as RowType))
  put(planRow, "plan")
  slots.forEach((slot, i) => {
    const kind = kinds[i] as Kind
    groups[kind].forEach((f, j) => put(slot.start + j, typeOf[kind], f))
  })
  // the sets each row is scored against: a kind's candidates, every candidate (the plan row), a clause's facts
  const members: Array<ReadonlyArray<number>> = []
  const reads = Array.from({ length: rows }, () => -1)
  const range = (slot: KindSlot) => Array.from({ length: slot.end - slot.start }, (_, j) => slot.start + j)
  slots.forEach((slot, i) => {
    const set = members.push(range(slot)) - 1
    reads[slot.row] = set
    if (kinds[i] !== "answer") for (const r of range(slot)) reads[r] = set
  })
  reads[planRow] = members.push(slots.flatMap(range)) - 1
  const answer = slots[kinds.indexOf("answer")] as KindSlot
  const byClause = new Map<number, number>()
  facts.forEach((f, j) => {
    const clause = f.clause ?? -1
    let set = byClause.get(clause)
    if (set === undefined) {
      set = members.push([]) - 1
      byClause.set(clause, set)
    }
    ;(members[set] as Array<number>).push(answer.start + j)
    reads[answer.start + j] = set
  })
  return {
    layout: { kinds: slots, planRow, rows, sets: { members, reads } },
    features,
    kinds,
    searches: kinds.includes("search") ? searches : [],
    calls: kinds.includes("call") ? calls : [],
    facts,
    usedCallIds: history.callIds,
    clauses,
    priorCalls: context.history.flatMap((step) =>
      step.observations.filter((o) => o.outcome._tag === "ok").map((o) => ({ id: o.callId, tool: o.tool as string, deps: o.refs }))
    ),
    request: context.request
  }
}

/** The call ids a call's arguments read through `$ref`s. */
const refDeps = (args: JsonObject): ReadonlyArray<CallId> =>
  [...new Set(Refs.collectRefs(args).flatMap((site) => (site._tag === "Ref" ? [site.target.call] : [])))]

/**
 * The plan of a call turn: its calls with the deps their `$ref`s imply, and the earlier calls they build on (and
 * those calls' own inputs), so the DAG it declares is the one the calls follow.
 */
const callPlan = (space: Space, calls: ReadonlyArray<ToolCall>, candidates: ReadonlyArray<CallCandidate>): Plan => {
  const prior = new Map(space.priorCalls.map((c) => [c.id as string, c]))
  const needed: Array<string> = []
  const visit = (id: CallId): void => {
    const c = prior.get(id)
    if (c === undefined || needed.includes(id)) return
    c.deps.forEach(visit)
    needed.push(id)
  }
  const deps = calls.map((c) => refDeps(c.arguments).filter((d) => prior.has(d)))
  deps.flat().forEach(visit)
  return {
    nodes: [
      ...needed.map((id) => {
        const c = prior.get(id) as Space["priorCalls"][number]
        return { id: c.id, tool: toolName(c.tool), slot: c.tool, deps: c.deps.filter((d) => needed.includes(d)) }
      }),
      ...calls.map((c, i) => ({ id: c.id, tool: c.tool, slot: space.clauses[candidates[i]?.clause ?? -1] ?? c.tool, deps: deps[i] as ReadonlyArray<CallId> }))
    ]
  }
}

/** A digest of the space's feature matrix and layout (recorded with a decision; a rebuilt space must match it). */
export const digest = (space: Space): string => {
  let h = hash32(JSON.stringify(space.layout))
  const bytes = new Uint8Array(space.features.buffer, space.features.byteOffset, space.features.byteLength)
  // hash32 over the bytes in chunks of 4096 (each chunk's hash seeds the next), read straight from the array
  for (let i = 0; i < bytes.length; i += 4096) h = hash32Bytes(bytes.subarray(i, i + 4096), h)
  return h.toString(16).padStart(8, "0")
}

/** Fresh call ids for `n` new calls: `c<k>` with k counting on from the ids used so far, skipping any taken. */
const freshIds = (used: ReadonlyArray<CallId>, n: number): ReadonlyArray<CallId> => {
  const taken = new Set<string>(used)
  const out: Array<CallId> = []
  let k = used.length + 1
  while (out.length < n) {
    const id = `c${k++}`
    if (!taken.has(id)) out.push(callId(id))
  }
  return out
}

/** The ParaAct turn a choice stands for. */
export const toTurn = (space: Space, choice: Choice): Turn => {
  const slot = space.layout.kinds[choice.kind] as KindSlot
  const kind = space.kinds[choice.kind] as Kind
  const picked = choice.selected.map((row) => row - slot.start)
  switch (kind) {
    case "search": {
      const searches = picked.map((i) => space.searches[i] as SearchCandidate)
      const plan: Plan | undefined = choice.plan
        ? { nodes: searches.map((s, i) => ({ id: callId(`p${i + 1}_${s.slot}`), slot: s.query, deps: [] })) }
        : undefined
      return {
        think: `Searching for ${searches.length} capability slot(s).`,
        ...(plan !== undefined ? { plan } : {}),
        searches: searches.map((s) => ({ slot: s.slot, query: s.query })),
        calls: []
      }
    }
    case "call": {
      const candidates = picked.map((i) => space.calls[i] as CallCandidate)
      const ids = freshIds(space.usedCallIds, candidates.length)
      const calls: Array<ToolCall> = candidates.map((c, i) => ({ id: ids[i] as CallId, tool: toolName(c.tool.name), arguments: c.arguments }))
      const plan: Plan | undefined = choice.plan ? callPlan(space, calls, candidates) : undefined
      return {
        think: `Running ${calls.length} independent call(s).`,
        ...(plan !== undefined ? { plan } : {}),
        searches: [],
        calls
      }
    }
    case "answer": {
      const facts = picked.map((i) => space.facts[i] as FactCandidate)
      return { think: "Answering from the observations.", searches: [], calls: [], answer: renderAnswer(facts) }
    }
  }
}

/**
 * Whether a candidate's arguments are a recorded call's arguments without some optional ones whose values the request
 * does not state.
 */
const sameBarUndetermined = (candidate: CallCandidate, args: JsonObject, request: string): boolean => {
  const extra = Object.keys(args).filter((k) => !(k in candidate.arguments))
  if (extra.length === 0) return false
  if (!Object.entries(candidate.arguments).every(([k, v]) => canonicalJson(v) === canonicalJson(args[k] as Json))) return false
  return extra.every((k) => !candidate.tool.parameters.required.includes(k) && !Refs.isRef(args[k] as Json) && !request.includes(String(args[k])))
}

/** How a recorded turn maps onto the space: the choice, and what of the turn the space cannot express. */
export interface Projection {
  readonly choice: Choice | undefined
  /** Actions of the turn with no candidate (labelled `search:<query>`, `call:<tool>`, `answer`, `mixed`). */
  readonly dropped: ReadonlyArray<string>
  /** Actions of the turn in all. */
  readonly actions: number
}

/**
 * Projects a recorded turn (a teacher's) onto the space: a search onto the clause candidate its query covers best
 * (at least half of the query's words), a call onto the candidate with the same tool and the same arguments, an
 * answer onto the facts whose values it states; a turn mixing kinds keeps its first kind's actions. Two actions
 * landing on one candidate keep one: the other counts as dropped, so a projection without drops replays every action.
 */
export const project = (space: Space, turn: Turn): Projection => {
  const kindIndex = (kind: Kind) => space.kinds.indexOf(kind)
  const plan = turn.plan !== undefined
  if (turn.answer !== undefined) {
    const k = kindIndex("answer")
    const slot = space.layout.kinds[k] as KindSlot
    const text = turn.answer.toLowerCase()
    const selected = answerRows(space.facts, text).map((i) => slot.start + i)
    if (slot.mode === "none") return { choice: { kind: k, selected: [], plan: false }, dropped: [], actions: 1 }
    return selected.length === 0
      ? { choice: undefined, dropped: ["answer"], actions: 1 }
      : { choice: { kind: k, selected, plan: false }, dropped: [], actions: 1 }
  }
  const dropped: Array<string> = []
  if (turn.searches.length > 0) {
    const k = kindIndex("search")
    const mixed = turn.calls.map((c) => `call:${c.tool}`)
    if (k < 0) return { choice: undefined, dropped: [...turn.searches.map((s) => `search:${s.query}`), ...mixed], actions: turn.searches.length + turn.calls.length }
    const slot = space.layout.kinds[k] as KindSlot
    const rows = new Set<number>()
    for (const s of turn.searches) {
      const q = tokens(s.query)
      // the candidate with the very query first; else the one whose words the query covers best (not taken yet)
      let best = space.searches.findIndex((c, i) => c.query === s.query && !rows.has(slot.start + i))
      let bestScore = best >= 0 ? Infinity : 0.5
      space.searches.forEach((c, i) => {
        const score = cover(q, tokens(c.query))
        if (score >= bestScore && (best < 0 || score > bestScore) && !rows.has(slot.start + i)) {
          best = i
          bestScore = score
        }
      })
      // a second search landing on a candidate already taken is not expressed either (the replay has one)
      if (best < 0 || rows.has(slot.start + best)) dropped.push(`search:${s.query}`)
      else rows.add(slot.start + best)
    }
    dropped.push(...mixed)
    const selected = [...rows].sort((a, b) => a - b)
    const fits = slot.mode !== "one" || selected.length === 1
    return {
      choice: selected.length > 0 && fits ? { kind: k, selected, plan } : undefined,
      dropped: fits ? dropped : [...dropped, ...selected.slice(1).map((r) => `search:${space.searches[r - slot.start]?.query}`)],
      actions: turn.searches.length + turn.calls.length
    }
  }
  const k = kindIndex("call")
  if (k < 0) return { choice: undefined, dropped: turn.calls.map((c) => `call:${c.tool}`), actions: turn.calls.length }
  const slot = space.layout.kinds[k] as KindSlot
  const rows = new Set<number>()
  for (const call of turn.calls) {
    const key = callKey(call.tool, call.arguments)
    let i = space.calls.findIndex((c) => c.tool.name === call.tool && callKey(c.tool.name, c.arguments) === key)
    // a candidate that leaves out optional arguments the request does not determine (a page size) is the same call
    if (i < 0) i = space.calls.findIndex((c) => c.tool.name === call.tool && sameBarUndetermined(c, call.arguments, space.request))
    if (i < 0 || rows.has(slot.start + i)) dropped.push(`call:${call.tool}`)
    else rows.add(slot.start + i)
  }
  const selected = [...rows].sort((a, b) => a - b)
  const fits = slot.mode !== "one" || selected.length === 1
  return {
    choice: selected.length > 0 && fits ? { kind: k, selected, plan } : undefined,
    dropped,
    actions: turn.calls.length
  }
}

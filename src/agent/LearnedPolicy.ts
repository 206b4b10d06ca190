/**
 * The embedded learned policy: each round it builds the action space from its context, scores every row against its
 * set with a small network (`src/math/SetScorer.ts`, or its exported ONNX graph), and samples a turn from the
 * factorised turn distribution, recording the choice, its exact log-probability and the parameter version on the step —
 * what the Trainer needs.
 */
import { Effect, Layer, Ref } from "effect"
import type { ToolSpec } from "../domain/Tool.ts"
import type { Decision, Step, Trajectory } from "../domain/Trajectory.ts"
import * as History from "../math/History.ts"
import { hashParts, rng } from "../math/Random.ts"
import * as SetScorer from "../math/SetScorer.ts"
import * as TurnDistribution from "../math/TurnDistribution.ts"
import * as ParaAct from "../protocol/ParaAct.ts"
import * as ActionSpace from "./ActionSpace.ts"
import { Policy, PolicyError } from "./Policy.ts"
import type { PolicyContext, PolicyOutput } from "./Policy.ts"
import { recordsAsked, requestedValues } from "./actions/Request.ts"

/** The scoring networks the policy can use: `set` learns its set encoder, `mlp` pools the rows' candidate blocks as they are (fixed summaries). */
export type ScorerKind = "set" | "mlp"

/**
 * The network's shape per scorer: the action space's row width (55), the set encoder and a head of two tanh layers.
 * `set`: a learned encoder φ of 32 tanh units per row, mean- and max-pooled over the row's set, so the head sees what
 * the rest of the set offers in learned terms (10,289 parameters). `mlp` (the default): the identity encoder over the
 * 28-column candidate block — fixed mean/max summaries under an MLP over 111 inputs (6,577 parameters; the earlier
 * scorer, bit for bit). The default stays `mlp`: on the validation split the learned encoder fits the teacher and the
 * oracle better but its DAgger student did not pass more tasks (18 and 13 of 180 against 20), at 1.4× the CPU
 * (docs/training.md §6).
 */
export const shapes: Readonly<Record<ScorerKind, SetScorer.Shape>> = {
  set: { input: ActionSpace.width, encoder: { kind: "learned", width: 32 }, hidden: [48, 24] },
  mlp: { input: ActionSpace.width, encoder: { kind: "identity", from: ActionSpace.candidateOffset, width: ActionSpace.width - ActionSpace.candidateOffset }, hidden: [48, 24] }
}

/** The scorer `npm start` trains and `models/` ships. */
export const defaultScorer: ScorerKind = "mlp"

/** The default scorer's shape. */
export const shape: SetScorer.Shape = shapes[defaultScorer]

/** Parameters with the version that names them (a trainer bumps it at every update). */
export interface Weights {
  readonly params: SetScorer.Params
  readonly version: number
}

/**
 * The output layer's bias at initialisation **[ours]**: −2.944, the logit of about 0.05. The output layer is scaled
 * small (`SetScorer.init`), so every untrained logit sits near this bias: a kind or a one-of choice is unchanged (a
 * shared shift leaves a softmax as it was), but each subset candidate starts at p ≈ 0.05 instead of ½ — the untrained
 * policy's greedy turn takes its single most probable candidate rather than whichever half of them a seed's draw puts
 * above ½ (one such draw called 855 tools a rollout; docs/training.md §2).
 */
export const initialOutputBias = -2.944

/** The seeded initialisation: the "Backbone" of the ablation. */
export const initial = (seed: number, scorer: ScorerKind = defaultScorer): Weights => ({ params: SetScorer.init(shapes[scorer], seed, 0.1, initialOutputBias), version: 0 })

/** Scores a batch of rows (rows × width features, with the rows' sets) to logits: the training-side forward pass, or onnxruntime. */
export type Scorer = (weights: Weights, x: Float64Array, rows: number, sets: SetScorer.Sets | undefined) => Effect.Effect<Float64Array, PolicyError>

/** The forward pass of `src/math/SetScorer.ts`. */
export const forwardScorer: Scorer = (weights, x, rows, sets) => Effect.sync(() => SetScorer.logits(weights.params, x, rows, sets))

/** How the policy decodes. */
export interface LearnedPolicyOptions {
  /** Label in reports (default `paraagent`). */
  readonly name?: string
  /** `sample` (training and Pass@k) or `greedy` (the most probable turn). */
  readonly decoding?: "sample" | "greedy"
  /**
   * Greedy decoding's probability threshold for the answer's facts (`TurnDistribution.greedyAbove`): every fact with
   * p above it is stated (else the most probable one). ½ (the default) is the most probable turn
   * ({@link TurnDistribution.greedy}).
   */
  readonly answerThreshold?: number
  /**
   * Greedy decoding's probability threshold for a search turn's queries **[ours]**: every query with p above it is
   * searched (else the most probable one). ½ (the default) is the most probable turn.
   */
  readonly searchThreshold?: number
  /** The same for a call turn's calls **[ours]**: every call with p above it is made (½: the most probable turn). */
  readonly callThreshold?: number
  /**
   * Greedy decoding's clause cover for the answer **[ours]**: every request clause with fact candidates and none
   * stated also states its most probable fact when its p is above this floor (undefined: off).
   */
  readonly answerCover?: number | undefined
  /**
   * Greedy decoding's clause quota for the answer **[ours]**: every request clause states as many distinct values as it
   * asks (`Request.requestedValues`: the items it counts times the attributes it names), adding its most probable facts
   * of new values with p above this floor (undefined: off); a clause's quota is at least one, as the clause cover's.
   */
  readonly answerQuota?: number | undefined
  /**
   * Greedy decoding's record bound for the answer **[ours]**: after the threshold, the cover and the quota, each list
   * of a call's output gives the answer the facts of as many records as their clause asks about
   * ({@link keepAskedRecords}; false or absent: off).
   */
  readonly answerRecords?: boolean | undefined
  /**
   * Greedy decoding skips repeats **[ours]**: a call candidate that repeats an operation a successful call already did
   * (`CallCandidate.repeats`: another provider's copy) is never chosen, and when every call candidate repeats, the
   * call kind is not chosen either ({@link skipRepeats}; false or absent: off).
   */
  readonly skipRepeats?: boolean | undefined
  /**
   * Greedy decoding calls every open clause **[ours]**: a call turn (ParaAct's subset call slot) also makes, for every
   * request clause with no successful call yet, its most probable call that would open it (`CallCandidate.opensClause`)
   * — independent calls of different clauses in one round ({@link callEveryClause}; false or absent: off).
   */
  readonly everyClause?: boolean | undefined
  /**
   * Greedy decoding weighs the search and call kinds by their best candidate **[ours]**: between them the kind is the
   * argmax of z_kind + α · log p(the kind's most probable candidate), so a kind whose best query or call the policy
   * rates low gives way to one with a call it rates high; the probability of going on against answering is left as it
   * was ({@link jointKind}; 0 or absent: off, the kind row alone).
   */
  readonly jointKind?: number | undefined
  /**
   * Sampled decoding's answer **[ours]**: `sampled` (the default) draws the answer's facts like every other candidate;
   * `decoded` draws the kind (and plan) and, when the kind is the answer, chooses its facts the way greedy evaluation
   * does (`answerThreshold`, `answerCover`, `answerQuota`) — the facts are then no factor of the step's probability
   * (`Decision.decoded`). RL whose rollouts answer this way trains the decisions evaluation samples under the answer
   * evaluation states, and leaves the facts to imitation.
   */
  readonly sampledAnswer?: "sampled" | "decoded"
  /**
   * Greedy decoding's stop **[ours]**: the turn answers, whatever kind is most probable, once every request clause has
   * a fact candidate rated above this probability ({@link readyToAnswer}; undefined: off). Its facts are those greedy
   * decoding states (the answer threshold, cover and quota).
   */
  readonly stopAt?: number | undefined
  /**
   * Sampled decoding's temperature **[ours]**: turns are drawn from π(logits / T), and `logprob` and `rescore` are
   * that distribution's (absent: 1). RL whose rollouts sample at T trains the same T (`PpoConfig.temperature`).
   */
  readonly temperature?: number
  readonly space?: ActionSpace.SpaceOptions
  readonly scorer?: Scorer
}

/**
 * The answer threshold of the pipeline's greedy evaluation (`npm start`, `bench/learning-validation.ts`): the student
 * ranks the requested facts first but rates each below ½ (two or three values compete with many look-alikes), so the
 * most probable turn states one fact where the request asks for several. Chosen on the validation split among
 * 0.3 / 0.2 / 0.15 / 0.1 (docs/training.md §6, `bench/student-diagnosis.ts`); other programs decode at ½.
 */
export const evalAnswerThreshold = 0.15

/**
 * The clause-cover floor of the pipeline's greedy evaluation **[ours]**: every request clause with fact candidates
 * and none above {@link evalAnswerThreshold} also states its most probable fact (0: whatever its probability). Chosen
 * on the validation split among off / 0 / 0.02 / 0.05 / 0.1 with four fixed students (docs/training.md §6).
 */
export const evalAnswerCover = 0

/**
 * The clause-quota floor of the pipeline's greedy evaluation **[ours]**: after the threshold and the cover, each clause
 * states as many distinct values as it asks (0: whatever their probability). Chosen on the validation split
 * (docs/training.md §6, "What a clause asks for").
 */
export const evalAnswerQuota = 0

/**
 * The record bound of the pipeline's greedy evaluation **[ours]**: after the threshold, the cover and the quota, each
 * list of a call's output gives the answer the facts of as many records as their clause asks about
 * ({@link keepAskedRecords}). Chosen on the validation split by a rule fixed before its runs (docs/training.md §6, "One
 * record per item asked").
 */
export const evalAnswerRecords = true

/**
 * Whether the pipeline's greedy evaluation skips repeated operations ({@link skipRepeats}): off. Measured on the
 * validation split by a rule fixed before its runs and not kept (docs/training.md §6, "Calls that repeat an operation").
 */
export const evalSkipRepeats = false

/**
 * Whether the pipeline's greedy evaluation calls every open clause ({@link callEveryClause}): off. Measured on the
 * validation split by a rule fixed before its runs and not kept (docs/training.md §6, "Every open clause's call in one
 * round").
 */
export const evalEveryClause = false

/**
 * The weight α with which the pipeline's greedy evaluation weighs the search and call kinds by their best candidate
 * ({@link jointKind}): 0, off. Measured on the validation split by a rule fixed before its runs (docs/training.md §6, "A kind weighed by
 * its best candidate").
 */
export const evalJointKind = 0

/**
 * The pipeline's evaluation decoding as policy options: every `eval*` setting above in one place, what `npm start`'s
 * learned rollouts and the benches that decode "as the pipeline does" spread into their options.
 */
export const evalDecoding: LearnedPolicyOptions = {
  answerThreshold: evalAnswerThreshold,
  answerCover: evalAnswerCover,
  answerQuota: evalAnswerQuota,
  answerRecords: evalAnswerRecords,
  skipRepeats: evalSkipRepeats,
  everyClause: evalEveryClause,
  jointKind: evalJointKind
}

/** Greedy decoding's thresholds per subset kind (½: the most probable turn). */
export interface GreedyThresholds {
  readonly answer?: number | undefined
  readonly search?: number | undefined
  readonly call?: number | undefined
  /** The answer's clause-cover floor (undefined: off): see {@link LearnedPolicyOptions.answerCover}. */
  readonly cover?: number | undefined
  /** The answer's clause-quota floor (undefined: off): see {@link LearnedPolicyOptions.answerQuota}. */
  readonly quota?: number | undefined
  /** The stop (undefined: off): see {@link LearnedPolicyOptions.stopAt}. */
  readonly stop?: number | undefined
  /** The answer's record bound (false or absent: off): see {@link LearnedPolicyOptions.answerRecords}. */
  readonly records?: boolean | undefined
  /** Skip repeated operations (false or absent: off): see {@link LearnedPolicyOptions.skipRepeats}. */
  readonly repeats?: boolean | undefined
  /** Call every open clause (false or absent: off): see {@link LearnedPolicyOptions.everyClause}. */
  readonly clauses?: boolean | undefined
  /** The best candidate's weight in the kind decision (0 or absent: off): see {@link LearnedPolicyOptions.jointKind}. */
  readonly jointKind?: number | undefined
}

/** Greedy decoding's settings of a policy's options. */
export const greedyThresholds = (options: LearnedPolicyOptions): GreedyThresholds => ({
  answer: options.answerThreshold,
  search: options.searchThreshold,
  call: options.callThreshold,
  cover: options.answerCover,
  quota: options.answerQuota,
  stop: options.stopAt,
  records: options.answerRecords,
  repeats: options.skipRepeats,
  clauses: options.everyClause,
  jointKind: options.jointKind
})

/**
 * The greedy choice of a space: the most probable kind, its candidates kept down to the kind's threshold — an answer's
 * facts, a search's queries, a call turn's calls (½, the default: {@link TurnDistribution.greedy}).
 */
export const greedyChoice = (space: ActionSpace.Space, scores: Float64Array, thresholds: GreedyThresholds = {}): TurnDistribution.Choice => {
  const logits = thresholds.repeats === true ? skipRepeats(space, scores) : scores
  const stopped = thresholds.stop !== undefined ? stopChoice(space, logits, thresholds.stop, thresholds) : undefined
  if (stopped !== undefined) return stopped
  const weighed = (thresholds.jointKind ?? 0) > 0 ? jointKind(space, logits, thresholds.jointKind as number) : logits
  const base = TurnDistribution.greedy(space.layout, weighed)
  const kind = space.kinds[base.kind] as ActionSpace.Kind | undefined
  const threshold = (kind === undefined ? undefined : thresholds[kind]) ?? 0.5
  const chosen = threshold === 0.5 ? base : TurnDistribution.greedyAbove(space.layout, weighed, threshold, (k) => k === base.kind)
  if (kind === "answer") return answerCompleted(space, logits, chosen, thresholds)
  return kind === "call" && thresholds.clauses === true ? callEveryClause(space, logits, chosen) : chosen
}

/**
 * A call turn with, added to its calls, the most probable call that would open each request clause no successful call
 * has served yet (`CallCandidate.opensClause`; ties: the earlier candidate) **[ours]**, when the call slot is a subset
 * (ParaAct; ReAct's one call a round is left alone). Calls already chosen stay; a clause they open gets none added.
 */
export const callEveryClause = (space: ActionSpace.Space, logits: Float64Array, choice: TurnDistribution.Choice): TurnDistribution.Choice => {
  const slot = space.layout.kinds[choice.kind]
  if (slot === undefined || slot.mode !== "subset") return choice
  const opened = new Set(choice.selected.map((r) => (space.calls[r - slot.start] as ActionSpace.CallCandidate).clause))
  const best = new Map<number, number>()
  space.calls.forEach((c, i) => {
    if (!c.opensClause || opened.has(c.clause)) return
    const row = slot.start + i
    const known = best.get(c.clause)
    if (known === undefined || (logits[row] as number) > (logits[known] as number)) best.set(c.clause, row)
  })
  if (best.size === 0) return choice
  return { ...choice, selected: [...choice.selected, ...best.values()].sort((a, b) => a - b) }
}

/**
 * The logits with the search and call kind rows each raised by α times the log-probability of the kind's most probable
 * candidate **[ours]** — log σ(z) of the best for a subset kind, its log-softmax among the kind's candidates for a
 * one-of kind — then shifted together so that their log-sum-exp is what it was: going on (searching or calling) keeps
 * its probability against answering, and between the two the greedy kind is the argmax of log P(kind) + α · log P(its
 * best action) — a kind is chosen for what it would do. The answer's row and every candidate row are unchanged. A new
 * array.
 */
export const jointKind = (space: ActionSpace.Space, logits: Float64Array, alpha: number): Float64Array => {
  const out = Float64Array.from(logits)
  const rows: Array<number> = []
  space.layout.kinds.forEach((slot, k) => {
    const kind = space.kinds[k]
    if ((kind !== "search" && kind !== "call") || slot.end <= slot.start || !Number.isFinite(logits[slot.row] as number)) return
    let best = Number.NEGATIVE_INFINITY
    for (let r = slot.start; r < slot.end; r++) best = Math.max(best, logits[r] as number)
    if (best === Number.NEGATIVE_INFINITY) return
    let logp = TurnDistribution.logSigmoid(best)
    if (slot.mode === "one") {
      let sum = 0
      for (let r = slot.start; r < slot.end; r++) sum += Math.exp((logits[r] as number) - best)
      logp = -Math.log(sum)
    }
    out[slot.row] = (logits[slot.row] as number) + alpha * logp
    rows.push(slot.row)
  })
  // the two kinds keep their joint share against the answer: only which of them goes on changes
  const lse = (xs: ArrayLike<number>) => {
    let m = Number.NEGATIVE_INFINITY
    for (const r of rows) m = Math.max(m, xs[r] as number)
    let sum = 0
    for (const r of rows) sum += Math.exp((xs[r] as number) - m)
    return m + Math.log(sum)
  }
  if (rows.length > 0) {
    const shift = lse(logits) - lse(out)
    for (const r of rows) out[r] = (out[r] as number) + shift
  }
  return out
}

/**
 * The logits with every call candidate that repeats a successful operation (`CallCandidate.repeats`) made impossible
 * (−∞), and the call kind too when no other call is left **[ours]**: greedy decoding then never spends a round asking
 * another provider for what the agent already has. The same array when nothing repeats.
 */
export const skipRepeats = (space: ActionSpace.Space, logits: Float64Array): Float64Array => {
  const kind = space.kinds.indexOf("call")
  const slot = space.layout.kinds[kind]
  if (kind < 0 || slot === undefined || !space.calls.some((c) => c.repeats)) return logits
  const out = Float64Array.from(logits)
  space.calls.forEach((c, i) => {
    if (c.repeats) out[slot.start + i] = Number.NEGATIVE_INFINITY
  })
  if (space.calls.every((c) => c.repeats)) out[slot.row] = Number.NEGATIVE_INFINITY
  return out
}

/**
 * Whether every request clause has a fact candidate the policy rates above `floor` **[ours]**: each thing the request
 * asks has an observed value that looks like its answer, so another round would only spend time. False without
 * clauses or without an answer kind on offer.
 */
export const readyToAnswer = (space: ActionSpace.Space, logits: Float64Array, floor: number): boolean => {
  const answer = answerSlot(space)
  return answer !== undefined && readyAt(space, answer.slot, logits, floor)
}

/** The answer kind's index and slot, when a subset answer is on offer. */
const answerSlot = (space: ActionSpace.Space): { readonly kind: number; readonly slot: TurnDistribution.KindSlot } | undefined => {
  const kind = space.kinds.indexOf("answer")
  const slot = space.layout.kinds[kind]
  return kind < 0 || slot === undefined || slot.mode !== "subset" ? undefined : { kind, slot }
}

/** Every clause has a fact of the answer slot above `floor` (false without clauses). */
const readyAt = (space: ActionSpace.Space, slot: TurnDistribution.KindSlot, logits: Float64Array, floor: number): boolean => {
  if (space.clauses.length === 0) return false
  const cut = Math.log(floor / (1 - floor))
  const ready = new Set<number>()
  space.facts.forEach((f, i) => {
    const clause = f.clause
    if (clause !== undefined && clause >= 0 && (logits[slot.start + i] as number) > cut) ready.add(clause)
  })
  return ready.size === space.clauses.length
}

/** The answer greedy decoding states, when the stop's condition holds. */
const stopChoice = (space: ActionSpace.Space, logits: Float64Array, floor: number, thresholds: GreedyThresholds): TurnDistribution.Choice | undefined => {
  const answer = answerSlot(space)
  if (answer === undefined || !readyAt(space, answer.slot, logits, floor)) return undefined
  const facts: TurnDistribution.Choice = { kind: answer.kind, selected: TurnDistribution.subsetAbove(answer.slot, logits, thresholds.answer ?? 0.5), plan: false }
  return answerCompleted(space, logits, facts, thresholds)
}

/**
 * An answer's facts with the clause cover and then the clause quota applied, each when its floor is given, and then
 * the record bound when it is on.
 */
const answerCompleted = (space: ActionSpace.Space, logits: Float64Array, choice: TurnDistribution.Choice, thresholds: GreedyThresholds): TurnDistribution.Choice => {
  const covered = thresholds.cover !== undefined ? coverClauses(space, logits, choice, thresholds.cover) : choice
  const filled = thresholds.quota !== undefined ? quotaClauses(space, logits, covered, thresholds.quota) : covered
  return thresholds.records === true ? keepAskedRecords(space, logits, filled) : filled
}

/**
 * A sampled turn whose answer's facts are decoded **[ours]**: when the draw's kind is the answer, its facts are those
 * greedy decoding states at these thresholds (every fact above the answer threshold, else the most probable, then the
 * cover and the quota), marked `decoded`; any other turn is the draw itself. `logits` are those the turn was drawn
 * from: at a sampling temperature T ≠ 1, logits / T, so the thresholds then read π(logits / T)'s probabilities.
 */
export const decodedAnswer = (space: ActionSpace.Space, logits: Float64Array, drawn: TurnDistribution.Choice, thresholds: GreedyThresholds): TurnDistribution.Choice => {
  if (space.kinds[drawn.kind] !== "answer") return drawn
  const slot = space.layout.kinds[drawn.kind] as TurnDistribution.KindSlot
  if (slot.mode !== "subset") return drawn
  const facts = { ...drawn, selected: TurnDistribution.subsetAbove(slot, logits, thresholds.answer ?? 0.5), decoded: true }
  return answerCompleted(space, logits, facts, thresholds)
}

/**
 * An answer's facts with every uncovered clause's most probable fact added when its p is above `floor` **[ours]**: a
 * request of several clauses asks something of each, and the facts of one clause compete with the look-alikes of all.
 * The clause quota of one value a clause.
 */
export const coverClauses = (space: ActionSpace.Space, logits: Float64Array, choice: TurnDistribution.Choice, floor: number): TurnDistribution.Choice =>
  quotaClauses(space, logits, choice, floor, () => 1)

/**
 * An answer's facts with each clause's quota filled **[ours]**: a clause that asks n values (`Request.requestedValues`:
 * the items it counts times the attributes it names) and states fewer distinct values also states its most probable
 * facts of values not yet stated, up to n, when their p is above `floor`. A clause asking for "the rating and street
 * address" or "the first three domains" is not answered by one fact, nor by one value twice. `quota`: the values a
 * clause asks (the clause cover asks one).
 */
export const quotaClauses = (
  space: ActionSpace.Space,
  logits: Float64Array,
  choice: TurnDistribution.Choice,
  floor: number,
  quota: (clause: string) => number = requestedValues
): TurnDistribution.Choice => {
  const slot = space.layout.kinds[choice.kind] as TurnDistribution.KindSlot
  if (slot.mode !== "subset") return choice
  const valueOf = (r: number) => space.facts[r - slot.start]?.value ?? ""
  const stated = new Set(choice.selected)
  const byClause = new Map<number, Array<number>>()
  space.facts.forEach((f, i) => {
    if (f.clause === undefined || f.clause < 0) return
    byClause.set(f.clause, [...(byClause.get(f.clause) ?? []), slot.start + i])
  })
  const cut = floor <= 0 ? -Infinity : Math.log(floor / (1 - floor))
  const added: Array<number> = []
  for (const [clause, rows] of byClause) {
    const values = new Set(rows.filter((r) => stated.has(r)).map(valueOf))
    const want = quota(space.clauses[clause] ?? "")
    const open = rows.filter((r) => !stated.has(r) && (logits[r] as number) > cut).sort((a, b) => (logits[b] as number) - (logits[a] as number) || a - b)
    for (const r of open) {
      if (values.size >= want) break
      if (values.has(valueOf(r))) continue
      values.add(valueOf(r))
      added.push(r)
    }
  }
  return added.length === 0 ? choice : { ...choice, selected: [...choice.selected, ...added].sort((a, b) => a - b) }
}

/**
 * An answer's facts kept to the records their clause asks about **[ours]**: within one list of one call's output
 * (the facts whose paths share the part before the list index), the facts of at most n records stay, n =
 * `Request.recordsAsked` of the facts' clause — the number it counts by ("the first three domains": 3), every record
 * for a list without a number, one otherwise — and the records kept are those whose best stated fact is most probable
 * (ties: the earlier record). A question about one thing is answered from one record: another record's value of the
 * same field beside it hedges between two answers. Facts outside a list, or of no clause, are kept.
 */
export const keepAskedRecords = (space: ActionSpace.Space, logits: Float64Array, choice: TurnDistribution.Choice): TurnDistribution.Choice => {
  const slot = space.layout.kinds[choice.kind] as TurnDistribution.KindSlot
  if (slot.mode !== "subset") return choice
  // per list: each record's stated rows and its best logit
  const lists = new Map<string, { readonly clause: number; readonly records: Map<number, { best: number; readonly rows: Array<number> }> }>()
  for (const r of choice.selected) {
    const fact = space.facts[r - slot.start]
    if (fact === undefined || fact.clause === undefined || fact.clause < 0) continue
    const at = fact.path.findIndex((p) => typeof p === "number")
    if (at < 0) continue
    const key = `${fact.callId}\u0000${fact.path.slice(0, at).join("\u0000")}`
    const list = lists.get(key) ?? { clause: fact.clause, records: new Map() }
    lists.set(key, list)
    const index = fact.path[at] as number
    const record = list.records.get(index) ?? { best: -Infinity, rows: [] }
    list.records.set(index, record)
    record.rows.push(r)
    record.best = Math.max(record.best, logits[r] as number)
  }
  const dropped = new Set<number>()
  for (const list of lists.values()) {
    const n = Math.max(1, recordsAsked(space.clauses[list.clause] ?? ""))
    if (list.records.size <= n) continue
    const ranked = [...list.records].sort((a, b) => b[1].best - a[1].best || a[0] - b[0])
    for (const [, record] of ranked.slice(n)) for (const r of record.rows) dropped.add(r)
  }
  return dropped.size === 0 ? choice : { ...choice, selected: choice.selected.filter((r) => !dropped.has(r)) }
}

/** The space of a policy context (what a rebuilt step must reproduce). */
export const spaceOf = (context: PolicyContext, options: ActionSpace.SpaceOptions = ActionSpace.defaultSpaceOptions): ActionSpace.Space =>
  ActionSpace.build(context, options)

/** The uniform source of a round's sampling: a function of the rollout seed and the position only. */
const uniformOf = (context: Pick<PolicyContext, "seed" | "round" | "history">): (() => number) =>
  rng(hashParts(context.seed, "learned-policy", context.round, context.history.length)).next

/** The choice a decision recorded, in layout terms. */
export const choiceOf = (decision: Decision): TurnDistribution.Choice => ({
  kind: decision.kindIndex,
  selected: decision.selected,
  plan: decision.plan,
  ...(decision.decoded === true ? { decoded: true } : {})
})

/** Builds the policy over a cell of weights (a trainer swaps the cell's contents between iterations). */
export const make = (weights: Ref.Ref<Weights>, options: LearnedPolicyOptions = {}) => {
  const scorer = options.scorer ?? forwardScorer
  const spaceOptions = options.space ?? ActionSpace.defaultSpaceOptions
  const decoding = options.decoding ?? "sample"
  const thresholds = greedyThresholds(options)
  const temperature = options.temperature ?? 1
  // the distribution sampled and scored: logits / T (greedy turns do not depend on T for kinds and ½ thresholds)
  const distribution = (logits: Float64Array) => (decoding === "sample" && temperature !== 1 ? TurnDistribution.temper(logits, temperature) : logits)
  const act = Effect.fn("LearnedPolicy.act")(function*(context: PolicyContext) {
    const current = yield* Ref.get(weights)
    const space = spaceOf(context, spaceOptions)
    const logits = distribution(yield* scorer(current, space.features, space.layout.rows, space.layout.sets))
    const drawn = () => TurnDistribution.sample(space.layout, logits, uniformOf(context))
    const choice = decoding === "greedy"
      ? greedyChoice(space, logits, thresholds)
      : options.sampledAnswer === "decoded" ? decodedAnswer(space, logits, drawn(), thresholds) : drawn()
    const logprob = TurnDistribution.logProb(space.layout, logits, choice)
    const turn = ActionSpace.toTurn(space, choice)
    const decision: Decision = {
      version: current.version,
      kind: space.kinds[choice.kind] as string,
      kindIndex: choice.kind,
      selected: choice.selected,
      plan: choice.plan,
      ...(choice.decoded === true ? { decoded: true } : {}),
      rows: space.layout.rows,
      digest: ActionSpace.digest(space)
    }
    const output: PolicyOutput = { text: ParaAct.printTurn(turn), turn, usage: { promptTokens: 0, completionTokens: 0 }, logprob, decision }
    return output
  })
  const rescore = Effect.fn("Policy.rescore")(function*(context: PolicyContext, step: Step) {
    const decision = step.decision
    if (decision === undefined) return yield* new PolicyError({ message: `step ${step.index} carries no decision of a learned policy` })
    const space = spaceOf(context, spaceOptions)
    const digest = ActionSpace.digest(space)
    if (digest !== decision.digest) {
      return yield* new PolicyError({ message: `step ${step.index}: the rebuilt action space (digest ${digest}) is not the recorded one (${decision.digest})` })
    }
    const current = yield* Ref.get(weights)
    const logits = distribution(yield* scorer(current, space.features, space.layout.rows, space.layout.sets))
    return { logprob: TurnDistribution.logProb(space.layout, logits, choiceOf(decision)) }
  })
  return Policy.of({ name: options.name ?? "paraagent", privileged: false, act, rescore })
}

/** The policy as a layer over a weights cell. */
export const layer = (weights: Ref.Ref<Weights>, options: LearnedPolicyOptions = {}): Layer.Layer<Policy> =>
  Layer.succeed(Policy, make(weights, options))

/** The policy as a layer with fixed weights. */
export const layerFixed = (fixed: Weights, options: LearnedPolicyOptions = {}): Layer.Layer<Policy> =>
  Layer.effect(Policy, Effect.map(Ref.make(fixed), (cell) => make(cell, options)))

/**
 * The context the runtime gave the policy before step `index` of a linear-paradigm trajectory (ParaAct, ReAct,
 * ExploreThenExecute): the request, the steps before, the tools retrieved so far. What a trainer rebuilds a
 * recorded step's space from.
 */
export const contextAt = (
  trajectory: Pick<Trajectory, "paradigm" | "seed" | "steps">,
  index: number,
  request: string,
  maxRounds: number,
  lookup: (name: string) => ToolSpec | undefined
): PolicyContext => {
  const history = trajectory.steps.slice(0, index)
  const step = trajectory.steps[index] as Step
  const retrieved = History.of(history).retrieved
  return {
    request,
    paradigm: trajectory.paradigm,
    round: index,
    maxRounds,
    controller: step.controller,
    history,
    tools: [...retrieved].flatMap((name) => {
      const spec = lookup(name)
      return spec === undefined ? [] : [spec]
    }),
    seed: trajectory.seed
  }
}

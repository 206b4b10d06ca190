/**
 * The policy-gradient objective of the learned policy: PPO's clipped surrogate, the k3 KL estimator, an entropy
 * bonus, gradient-norm clipping and Adam, chained per recorded step through the turn distribution and the scoring network (`SetScorer`).
 * Pure: no Effect, no I/O; parameters, gradients and optimiser moments are flat Float64Arrays updated in place.
 */
import * as Acceptable from "./Acceptable.ts"
import * as SetScorer from "./SetScorer.ts"
import * as TurnDistribution from "./TurnDistribution.ts"

/** One sample's clipped surrogate: the loss, its derivative wrt the log-probability, the ratio, and whether the clipped branch is active. */
export interface PpoClipResult {
  readonly loss: number
  readonly dLogprob: number
  readonly ratio: number
  readonly clipped: boolean
}

/**
 * PPO's per-sample loss −min(r·A, clip(r, 1 − ε, 1 + ε)·A) with r = exp(logprob − behaviour). The clipped branch is
 * active (and the gradient 0) when it is strictly the smaller: r > 1 + ε with A > 0, or r < 1 − ε with A < 0.
 */
export const ppoClip = (input: {
  readonly logprob: number
  readonly behaviour: number
  readonly advantage: number
  readonly clip: number
}): PpoClipResult => {
  const { advantage: a, clip } = input
  const ratio = Math.exp(input.logprob - input.behaviour)
  const bounded = Math.min(Math.max(ratio, 1 - clip), 1 + clip)
  const clipped = bounded * a < ratio * a
  return clipped
    ? { loss: -bounded * a, dLogprob: 0, ratio, clipped }
    : { loss: -ratio * a, dLogprob: -ratio * a, ratio, clipped }
}

/** The k3 estimator of KL(π ‖ π_ref) from one sample, exp(ref − lp) − (ref − lp) − 1 (≥ 0), and its derivative 1 − exp(ref − lp) wrt lp. */
export const klK3 = (input: { readonly logprob: number; readonly reference: number }): { readonly kl: number; readonly dLogprob: number } => {
  const d = input.reference - input.logprob
  // expm1 keeps the estimate accurate (and ≥ 0) when the two log-probabilities are close
  return { kl: Math.expm1(d) - d, dLogprob: -Math.expm1(d) }
}

/**
 * Scales `grad` in place so its Euclidean norm is at most `maxNorm`; returns the norm before clipping. A non-finite
 * norm leaves the gradient as it is (the caller should skip that update).
 */
export const clipGradNorm = (grad: Float64Array, maxNorm: number): number => {
  let sum = 0
  for (let i = 0; i < grad.length; i++) sum += (grad[i] as number) ** 2
  const norm = Math.sqrt(sum)
  if (Number.isFinite(norm) && norm > maxNorm) {
    const scale = maxNorm / norm
    for (let i = 0; i < grad.length; i++) grad[i] = (grad[i] as number) * scale
  }
  return norm
}

/** Adam's coefficients; `weightDecay` is decoupled (AdamW: θ ← θ − lr·wd·θ, outside the moments). */
export interface AdamConfig {
  readonly lr: number
  readonly beta1: number
  readonly beta2: number
  readonly eps: number
  readonly weightDecay?: number
}

/** The usual defaults: lr 1e-3, β 0.9 / 0.999, ε 1e-8, no weight decay. */
export const defaultAdam: AdamConfig = { lr: 1e-3, beta1: 0.9, beta2: 0.999, eps: 1e-8 }

/** Adam's moments and step count (mutable, so a checkpoint can store them and a resumed run continue). */
export interface AdamState {
  readonly m: Float64Array
  readonly v: Float64Array
  t: number
}

/** Zero moments for `n` parameters. */
export const adamInit = (n: number): AdamState => ({ m: new Float64Array(n), v: new Float64Array(n), t: 0 })

/** One bias-corrected Adam (AdamW with `weightDecay`) step: updates `params` and `state` in place. */
export const adamStep = (params: Float64Array, grad: Float64Array, state: AdamState, config: AdamConfig): void => {
  const { lr, beta1, beta2, eps } = config
  const decay = lr * (config.weightDecay ?? 0)
  state.t += 1
  const c1 = 1 - beta1 ** state.t
  const c2 = 1 - beta2 ** state.t
  for (let i = 0; i < params.length; i++) {
    const g = grad[i] as number
    const m = beta1 * (state.m[i] as number) + (1 - beta1) * g
    const v = beta2 * (state.v[i] as number) + (1 - beta2) * g * g
    state.m[i] = m
    state.v[i] = v
    const p = params[i] as number
    params[i] = p - lr * (m / c1) / (Math.sqrt(v / c2) + eps) - decay * p
  }
}

/** PPO's coefficients: the clip ε, passes over each batch, the KL and entropy weights, the gradient-norm cap and an optional minibatch size. */
export interface PpoConfig {
  readonly clip: number
  readonly epochs: number
  /** Weight of the k3 KL to the reference policy; 0 turns it off. */
  readonly klCoef: number
  readonly entropyCoef: number
  readonly maxGradNorm: number
  /** Steps per update; absent: the whole batch. */
  readonly minibatch?: number
  /**
   * The entropy bonus: `sum` ({@link TurnDistribution.entropy}: a subset kind's Bernoulli entropies summed, so it
   * grows with the candidate count) or `normalised` **[ours]** ({@link TurnDistribution.entropyNormalised}: each
   * factor's entropy over its maximum, bounded whatever the count). Absent: `sum`.
   */
  readonly entropy?: "sum" | "normalised"
  /**
   * The rollouts' sampling temperature T **[ours]**: the policy trained is π(logits / T) — the one the rollouts
   * sampled from (`LearnedPolicyOptions.temperature`) — so each step's log-probabilities, KL and entropy are taken
   * on logits / T and the gradient carries d(z / T)/dz = 1 / T. Below 1 the trained distribution is sharper, closer
   * to the greedy decoding that evaluation uses. Absent: 1.
   */
  readonly temperature?: number
}

/** The logits of the distribution a config trains: `logits / config.temperature` (the same array at T = 1). */
export const tempered = (config: Pick<PpoConfig, "temperature">, logits: Float64Array): Float64Array => {
  const t = config.temperature ?? 1
  return t === 1 ? logits : TurnDistribution.temper(logits, t)
}

/** The gradient wrt logits / T taken back to the logits, in place: d(z / T)/dz = 1 / T (nothing at T = 1). */
const chainTemperature = (config: Pick<PpoConfig, "temperature">, d: Float64Array): void => {
  const t = config.temperature ?? 1
  if (t !== 1) for (let r = 0; r < d.length; r++) d[r] = (d[r] as number) / t
}

/** The entropy bonus a config names. */
export const entropyOf = (config: Pick<PpoConfig, "entropy">) =>
  config.entropy === "normalised" ? TurnDistribution.entropyNormalised : TurnDistribution.entropy

/** clip 0.2, 4 epochs, no KL, entropy 0.01, gradient norm ≤ 1. */
export const defaultPpo: PpoConfig = { clip: 0.2, epochs: 4, klCoef: 0, entropyCoef: 0.01, maxGradNorm: 1.0 }

/**
 * One recorded step: the scored matrix (`x` is layout.rows × input, row-major), the layout (with the rows' sets) and
 * the choice made; for imitation, optionally the set of turns as good as the choice (the loss is then
 * −log P(any of them), `Acceptable.logProb`).
 */
export interface RecordedStep {
  readonly x: Float64Array
  readonly layout: TurnDistribution.Layout
  readonly choice: TurnDistribution.Choice
  readonly acceptable?: Acceptable.Acceptable
  /** Imitation also ranks the chosen kind's candidates (the listwise term, `TurnDistribution.listwiseGrad`) **[ours]**. */
  readonly rank?: boolean
}

/** The imitation log-likelihood of a step and its gradient: of the acceptable set when the step carries one, else of the choice. */
const imitation = (step: RecordedStep, logits: Float64Array): { readonly logprob: number; readonly dLogits: Float64Array } =>
  step.acceptable !== undefined ? Acceptable.logProbGrad(step.layout, logits, step.acceptable) : TurnDistribution.logProbGrad(step.layout, logits, step.choice)

/** What one step contributed: its total loss (unweighted), the PPO ratio and branch, the k3 KL (0 without a reference) and the entropy. */
export interface StepLossResult {
  readonly loss: number
  readonly logprob: number
  readonly ratio: number
  readonly clipped: boolean
  readonly kl: number
  readonly entropy: number
}

/**
 * One step's PPO loss, ppoClip + klCoef·k3 − entropyCoef·H, and its gradient wrt the network's parameters, `weight` ×
 * the gradient added into `grad` (weight 1/N averages a batch of N). `behaviour` is the log-probability the
 * sampling policy gave the choice and `reference` that of the KL anchor, both at the config's temperature T (absent:
 * 1): the current policy is evaluated on logits / T, so the ratio compares the distribution that was sampled.
 */
export const stepLoss = (input: RecordedStep & {
  readonly params: SetScorer.Params
  readonly behaviour: number
  readonly advantage: number
  readonly reference?: number
  readonly config: PpoConfig
  readonly grad: Float64Array
  readonly weight?: number
}): StepLossResult => {
  const { params, layout, choice, config } = input
  const forward = SetScorer.forward(params, input.x, layout.rows, layout.sets)
  const logits = tempered(config, forward.logits)
  const { logprob, dLogits } = TurnDistribution.logProbGrad(layout, logits, choice)
  const ppo = ppoClip({ logprob, behaviour: input.behaviour, advantage: input.advantage, clip: config.clip })
  const kl = input.reference === undefined ? { kl: 0, dLogprob: 0 } : klK3({ logprob, reference: input.reference })
  const h = entropyOf(config)(layout, logits)
  const dLogprob = ppo.dLogprob + config.klCoef * kl.dLogprob
  // d(z / T)/dz = 1 / T
  const scale = (input.weight ?? 1) / (config.temperature ?? 1)
  const d = new Float64Array(layout.rows)
  for (let r = 0; r < d.length; r++) {
    d[r] = scale * (dLogprob * (dLogits[r] as number) - config.entropyCoef * (h.dLogits[r] as number))
  }
  SetScorer.backward(params, forward.trace, d, input.grad)
  return {
    loss: ppo.loss + config.klCoef * kl.kl - config.entropyCoef * h.entropy,
    logprob,
    ratio: ppo.ratio,
    clipped: ppo.clipped,
    kl: kl.kl,
    entropy: h.entropy
  }
}

/** Behaviour cloning of a demonstrated step: loss −log P(choice), `weight` × its gradient wrt the parameters added into `grad`. */
export const sftStepLoss = (input: RecordedStep & {
  readonly params: SetScorer.Params
  readonly grad: Float64Array
  readonly weight?: number
}): { readonly loss: number; readonly logprob: number } => {
  const { params, layout } = input
  const { logits, trace } = SetScorer.forward(params, input.x, layout.rows, layout.sets)
  const { logprob, dLogits } = imitation(input, logits)
  const weight = input.weight ?? 1
  SetScorer.backward(params, trace, dLogits.map((g) => -weight * g), input.grad)
  return { loss: -logprob, logprob }
}

/** Several recorded steps' matrices stacked into one with their sets (one forward and one backward pass for a minibatch). */
const stack = (steps: ReadonlyArray<RecordedStep>, width: number): { readonly x: Float64Array; readonly offsets: ReadonlyArray<number>; readonly rows: number; readonly sets: SetScorer.Sets } => {
  let rows = 0
  const offsets: Array<number> = []
  for (const s of steps) {
    offsets.push(rows)
    rows += s.layout.rows
  }
  const x = new Float64Array(rows * width)
  steps.forEach((s, i) => x.set(s.x.subarray(0, s.layout.rows * width), (offsets[i] as number) * width))
  const sets = SetScorer.stackSets(steps.map((s, i) => ({ sets: s.layout.sets, rows: s.layout.rows, offset: offsets[i] as number })))
  return { x, offsets, rows, sets }
}

/**
 * {@link stepLoss} over a minibatch in one stacked forward/backward pass: the same losses and the same summed
 * gradient (each step weighted 1/N) as calling stepLoss on each step — a test checks they agree.
 */
export const ppoBatch = (input: {
  readonly params: SetScorer.Params
  readonly steps: ReadonlyArray<RecordedStep & { readonly behaviour: number; readonly advantage: number; readonly reference?: number }>
  readonly config: PpoConfig
  readonly grad: Float64Array
}): ReadonlyArray<StepLossResult> => {
  const { params, steps, config } = input
  if (steps.length === 0) return []
  const { x, offsets, rows, sets } = stack(steps, params.shape.input)
  const forward = SetScorer.forward(params, x, rows, sets)
  const { trace } = forward
  const logits = tempered(config, forward.logits)
  const d = new Float64Array(rows)
  const weight = 1 / steps.length
  const results = steps.map((s, i) => {
    const at = offsets[i] as number
    const own = logits.subarray(at, at + s.layout.rows)
    const { logprob, dLogits } = TurnDistribution.logProbGrad(s.layout, own, s.choice)
    const ppo = ppoClip({ logprob, behaviour: s.behaviour, advantage: s.advantage, clip: config.clip })
    const kl = s.reference === undefined ? { kl: 0, dLogprob: 0 } : klK3({ logprob, reference: s.reference })
    const h = entropyOf(config)(s.layout, own)
    const dLogprob = ppo.dLogprob + config.klCoef * kl.dLogprob
    for (let r = 0; r < s.layout.rows; r++) d[at + r] = weight * (dLogprob * (dLogits[r] as number) - config.entropyCoef * (h.dLogits[r] as number))
    const result: StepLossResult = {
      loss: ppo.loss + config.klCoef * kl.kl - config.entropyCoef * h.entropy,
      logprob,
      ratio: ppo.ratio,
      clipped: ppo.clipped,
      kl: kl.kl,
      entropy: h.entropy
    }
    return result
  })
  chainTemperature(config, d)
  SetScorer.backward(params, trace, d, input.grad)
  return results
}

/**
 * {@link sftStepLoss} over a minibatch in one stacked pass (each step weighted 1/N); returns the losses. With
 * `listwise` λ > 0 a step marked `rank` adds λ × its listwise term (`TurnDistribution.listwiseGrad`) to its loss and
 * gradient **[ours]**.
 */
export const sftBatch = (input: {
  readonly params: SetScorer.Params
  readonly steps: ReadonlyArray<RecordedStep>
  readonly grad: Float64Array
  readonly listwise?: number
}): ReadonlyArray<number> => {
  const { params, steps } = input
  const lambda = input.listwise ?? 0
  if (steps.length === 0) return []
  const { x, offsets, rows, sets } = stack(steps, params.shape.input)
  const { logits, trace } = SetScorer.forward(params, x, rows, sets)
  const d = new Float64Array(rows)
  const weight = 1 / steps.length
  const losses = steps.map((s, i) => {
    const at = offsets[i] as number
    const own = logits.subarray(at, at + s.layout.rows)
    const { logprob, dLogits } = imitation(s, own)
    for (let r = 0; r < s.layout.rows; r++) d[at + r] = -weight * (dLogits[r] as number)
    if (lambda > 0 && s.rank === true) {
      const rank = TurnDistribution.listwiseGrad(s.layout, own, s.choice)
      for (let r = 0; r < s.layout.rows; r++) d[at + r] = (d[at + r] as number) + weight * lambda * (rank.dLogits[r] as number)
      return -logprob + lambda * rank.loss
    }
    return -logprob
  })
  SetScorer.backward(params, trace, d, input.grad)
  return losses
}

/**
 * A recorded step with per-factor credit **[ours]**: one behaviour log-probability and one advantage per factor of
 * {@link TurnDistribution.factors} (same order), and the reference's log-probability of the whole turn.
 */
export interface FactorSample extends RecordedStep {
  readonly behaviour: Float64Array
  readonly advantages: Float64Array
  readonly reference?: number
}

/** What one step contributed under per-factor PPO: {@link StepLossResult} plus its factor count and how many were clipped. */
export interface FactorLossResult extends StepLossResult {
  readonly factors: number
  readonly clippedFactors: number
}

/**
 * PPO with per-factor credit, the turn-level analogue of token-level PPO **[ours]**: each factor f of a step (the
 * kind, each candidate decision, the plan bit) is an action with its own ratio r_f = exp(log p_f − behaviour_f) and
 * advantage A_f; the step's loss is Σ_f −min(r_f·A_f, clip(r_f)·A_f) + klCoef·k3(turn) − entropyCoef·H, each step
 * weighted 1/N. With every A_f equal to the step's A it differs from {@link ppoBatch} only in where the clip applies
 * (per factor instead of on the product of the ratios), and has the same gradient while no factor is clipped.
 * `ratio` is the turn's ratio, `clipped` whether any factor was. One stacked forward/backward pass per minibatch.
 */
export const ppoFactorBatch = (input: {
  readonly params: SetScorer.Params
  readonly steps: ReadonlyArray<FactorSample>
  readonly config: PpoConfig
  readonly grad: Float64Array
}): ReadonlyArray<FactorLossResult> => {
  const { params, steps, config } = input
  if (steps.length === 0) return []
  const { x, offsets, rows, sets } = stack(steps, params.shape.input)
  const forward = SetScorer.forward(params, x, rows, sets)
  const { trace } = forward
  const logits = tempered(config, forward.logits)
  const d = new Float64Array(rows)
  const weight = 1 / steps.length
  const entropyFn = entropyOf(config)
  const results = steps.map((s, i) => {
    const at = offsets[i] as number
    const own = logits.subarray(at, at + s.layout.rows)
    const fs = TurnDistribution.factors(s.layout, own, s.choice)
    const weights = new Float64Array(fs.length)
    let loss = 0
    let logprob = 0
    let behaviour = 0
    let clipped = 0
    fs.forEach((f, k) => {
      const ppo = ppoClip({ logprob: f.logprob, behaviour: s.behaviour[k] as number, advantage: s.advantages[k] as number, clip: config.clip })
      loss += ppo.loss
      logprob += f.logprob
      behaviour += s.behaviour[k] as number
      if (ppo.clipped) clipped++
      weights[k] = ppo.dLogprob
    })
    const kl = s.reference === undefined || fs.length === 0 ? { kl: 0, dLogprob: 0 } : klK3({ logprob, reference: s.reference })
    // the KL is on the whole turn: its derivative reaches every factor with the same weight
    for (let k = 0; k < weights.length; k++) weights[k] = weight * ((weights[k] as number) + config.klCoef * kl.dLogprob)
    const grad = new Float64Array(s.layout.rows)
    TurnDistribution.addFactorGrad(s.layout, own, s.choice, weights, grad)
    const h = entropyFn(s.layout, own)
    for (let r = 0; r < s.layout.rows; r++) d[at + r] = (grad[r] as number) - weight * config.entropyCoef * (h.dLogits[r] as number)
    const result: FactorLossResult = {
      loss: loss + config.klCoef * kl.kl - config.entropyCoef * h.entropy,
      logprob: fs.length === 0 ? -Infinity : logprob,
      ratio: Math.exp(logprob - behaviour),
      clipped: clipped > 0,
      kl: kl.kl,
      entropy: h.entropy,
      factors: fs.length,
      clippedFactors: clipped
    }
    return result
  })
  chainTemperature(config, d)
  SetScorer.backward(params, trace, d, input.grad)
  return results
}

/**
 * The loss of {@link ppoFactorBatch} for one step, written as plainly as possible (per factor, no stacking): the
 * reference the tests check the batch and its gradient against.
 */
export const factorStepLoss = (input: FactorSample & { readonly params: SetScorer.Params; readonly config: PpoConfig }): number => {
  const { params, config } = input
  const logits = tempered(config, SetScorer.logits(params, input.x, input.layout.rows, input.layout.sets))
  const fs = TurnDistribution.factors(input.layout, logits, input.choice)
  let loss = 0
  let logprob = 0
  fs.forEach((f, k) => {
    loss += ppoClip({ logprob: f.logprob, behaviour: input.behaviour[k] as number, advantage: input.advantages[k] as number, clip: config.clip }).loss
    logprob += f.logprob
  })
  const kl = input.reference === undefined || fs.length === 0 ? 0 : klK3({ logprob, reference: input.reference }).kl
  return loss + config.klCoef * kl - config.entropyCoef * entropyOf(config)(input.layout, logits).entropy
}

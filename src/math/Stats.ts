/**
 * Summary statistics for evaluation and training logs: mean, population std, percentiles, and the unbiased
 * pass@k estimator. Pure; an undefined statistic (the mean of nothing, pass@k with k > n) is NaN, never thrown.
 */

/** Arithmetic mean; NaN for no values. */
export const mean = (xs: ReadonlyArray<number>): number => {
  if (xs.length === 0) return NaN
  let sum = 0
  for (const x of xs) sum += x
  return sum / xs.length
}

/** Population standard deviation (divides by n, as group normalisation does); NaN for no values. */
export const std = (xs: ReadonlyArray<number>): number => {
  if (xs.length === 0) return NaN
  const m = mean(xs)
  let sum = 0
  for (const x of xs) sum += (x - m) * (x - m)
  return Math.sqrt(sum / xs.length)
}

/**
 * The p-th percentile (p in [0, 100]) with linear interpolation between closest ranks (the default of numpy
 * and R type 7): rank (n − 1)·p/100 of the sorted values. NaN for no values or p outside [0, 100].
 */
export const percentile = (xs: ReadonlyArray<number>, p: number): number => {
  if (xs.length === 0 || !(p >= 0 && p <= 100)) return NaN
  const sorted = [...xs].sort((a, b) => a - b)
  const rank = ((sorted.length - 1) * p) / 100
  const lo = Math.floor(rank)
  const hi = Math.ceil(rank)
  const a = sorted[lo] as number
  const b = sorted[hi] as number
  return a + (b - a) * (rank - lo)
}

/** The median. */
export const p50 = (xs: ReadonlyArray<number>): number => percentile(xs, 50)

/** The 95th percentile. */
export const p95 = (xs: ReadonlyArray<number>): number => percentile(xs, 95)

/** n, mean, std, min, p50, p95, max of a sample. */
export interface Summary {
  readonly n: number
  readonly mean: number
  readonly std: number
  readonly min: number
  readonly p50: number
  readonly p95: number
  readonly max: number
}

/** The {@link Summary} of a sample (NaN fields when it is empty). */
export const summary = (xs: ReadonlyArray<number>): Summary => ({
  n: xs.length,
  mean: mean(xs),
  std: std(xs),
  min: xs.length === 0 ? NaN : xs.reduce((a, b) => Math.min(a, b)),
  p50: p50(xs),
  p95: p95(xs),
  max: xs.length === 0 ? NaN : xs.reduce((a, b) => Math.max(a, b))
})

/**
 * Unbiased pass@k from n samples of which c are correct: 1 − C(n−c, k)/C(n, k), computed as
 * 1 − ∏_{i=n−c+1}^{n} (1 − k/i) so no binomial coefficient is formed (stable for large n).
 * Needs integers 0 ≤ c ≤ n and 1 ≤ k ≤ n; NaN otherwise.
 */
export const passAtK = (n: number, c: number, k: number): number => {
  if (![n, c, k].every(Number.isInteger) || c < 0 || c > n || k < 1 || k > n) return NaN
  if (n - c < k) return 1
  let miss = 1
  for (let i = n - c + 1; i <= n; i++) miss *= 1 - k / i
  return 1 - miss
}

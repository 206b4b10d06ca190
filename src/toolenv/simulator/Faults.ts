/**
 * Transient faults and latency of the simulator: a pure function of (seed, task, call identity, attempt), so that a
 * retry of the same call can succeed, a replay is identical, and concurrent calls need no shared random state.
 */
import type { ErrorKind } from "../../domain/Call.ts"
import { hash32 } from "../../math/Random.ts"

/** The paper's simulator error-injection rate (spec Table 6). */
export const defaultFaultRate = 0.05

/** How injected faults split between kinds (429 rate limits, 500 server errors, timeouts); sums to 1. */
export const faultMix: ReadonlyArray<readonly [ErrorKind, number]> = [["rate_limited", 0.45], ["server_error", 0.4], ["timeout", 0.15]]

/** The message a real API gateway would send with each transient error. */
export const faultMessage: Readonly<Record<string, string>> = {
  rate_limited: "429 Too Many Requests: rate limit exceeded for this endpoint, retry after 1 second",
  server_error: "500 Internal Server Error: the upstream service failed to process the request",
  timeout: "504 Gateway Timeout: the upstream service did not respond in time"
}

/** The per-episode hash every fault draw of the episode starts from. */
export const episodeBase = (seed: number, taskId: string): number => hash32(taskId, seed)

/** A uniform number in [0, 1) for a call identity and attempt within an episode. */
export const draw = (base: number, callKey: string, attempt: number): number =>
  hash32(callKey, (base + Math.imul(attempt, 0x9e3779b9)) >>> 0) / 4294967296

/** The injected fault for a call attempt, or undefined (rate in [0, 1]). */
export const faultFor = (base: number, callKey: string, attempt: number, rate: number): ErrorKind | undefined => {
  if (rate <= 0) return undefined
  const u = draw(base, callKey, attempt)
  if (u >= rate) return undefined
  // Reuse the position inside [0, rate) to choose the kind: no second hash needed.
  let x = u / rate
  for (const [kind, share] of faultMix) {
    if (x < share) return kind
    x -= share
  }
  return "server_error"
}

/** A latency model: each tool has a base latency (log-uniform in [minMs, maxMs]); each call adds jitter. */
export interface LatencyModel {
  readonly minMs: number
  readonly maxMs: number
  /** Multiplicative jitter: a call takes base × (1 + jitter × u), u uniform in [-1, 1]. */
  readonly jitter: number
  /** How long a timeout fault takes before the 504 arrives. */
  readonly timeoutMs: number
}

/** A latency model shaped after public API latencies: 80–900 ms per tool, ±35% per call, 10 s timeouts. */
export const defaultLatency: LatencyModel = { minMs: 80, maxMs: 900, jitter: 0.35, timeoutMs: 10_000 }

/** A tool's base latency in ms. */
export const baseLatency = (model: LatencyModel, seed: number, tool: string): number => {
  const u = hash32(tool, seed ^ 0x5bd1e995) / 4294967296
  return Math.exp(Math.log(model.minMs) + u * (Math.log(model.maxMs) - Math.log(model.minMs)))
}

/** The latency of one call attempt in ms (a timeout fault takes the model's timeout instead). */
export const callLatency = (model: LatencyModel, seed: number, base: number, tool: string, callKey: string, attempt: number): number => {
  const j = draw(base ^ 0x27d4eb2f, callKey, attempt) * 2 - 1
  return Math.max(1, Math.round(baseLatency(model, seed, tool) * (1 + model.jitter * j)))
}

/**
 * The server's Prometheus metrics (served at `/metrics` by effect/observability's PrometheusMetrics): sessions in
 * memory, steps, tool calls and searches, errors by kind, and the step latency histogram.
 */
import { Metric } from "effect"

/** Live sessions in this replica's memory. */
export const sessionsOpen = Metric.gauge("toolenv_sessions_open", { description: "sessions held in this replica's memory" })

/** Sessions created. */
export const sessionsCreated = Metric.counter("toolenv_sessions_created_total", { description: "sessions created", incremental: true })

/** Rounds stepped. */
export const steps = Metric.counter("toolenv_steps_total", { description: "rounds stepped", incremental: true })

/** Tool calls executed inside steps. */
export const toolCalls = Metric.counter("toolenv_tool_calls_total", { description: "tool calls executed inside steps", incremental: true })

/** Searches executed inside steps and through `/tools/search`. */
export const searches = Metric.counter("toolenv_searches_total", { description: "retrieval queries answered", incremental: true })

/** Episodes rebuilt from the action log (a replica that had not seen the latest turn, or an evicted session). */
export const replays = Metric.counter("toolenv_replays_total", { description: "sessions rebuilt from the action log", incremental: true })

/**
 * Warm steps whose optimistic append the log refused (another replica took the round, or the session was closed or
 * created again): each one went on to read the log's head and answer from it (Sessions.step).
 */
export const optimisticRetries = Metric.counter("toolenv_step_log_retries_total", { description: "warm steps whose optimistic append the log refused, answered from the log instead", incremental: true })

/** Steps answered by the server's node-level fast path (layers/server/StepFastPath.ts) rather than the framework's router. */
export const fastPathSteps = Metric.counter("toolenv_step_fast_path_total", { description: "steps served by the node-level fast path", incremental: true })

/** Requests refused with a typed error, by its tag. */
export const errors = Metric.counter("toolenv_errors_total", { description: "requests refused with a typed error, by kind", incremental: true })

/** Step latency in milliseconds (execution of the whole round, replay included). */
export const stepLatency = Metric.histogram("toolenv_step_latency_ms", {
  description: "time to serve one step (ms)",
  boundaries: [0.25, 0.5, 1, 2, 5, 10, 20, 50, 100, 250, 1000]
})

/** Counts one refused request under its error tag. */
export const countError = (kind: string) => Metric.update(Metric.withAttributes(errors, { kind }), 1)

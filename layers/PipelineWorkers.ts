/**
 * The pipeline's seeds on worker threads: each seed's SFT, RL and evaluation runs in its own worker (its own world,
 * its own connection to the run store's SQLite file in WAL mode), so the two cores of the reference machine both
 * work. Results come back structured-cloned; a worker's failure is the seed's PipelineError. With `--otlp` a worker
 * exports its own spans to the same collector, under the span that started it.
 */
import { Effect } from "effect"
import { Worker } from "node:worker_threads"
import * as Pipeline from "../src/training/Pipeline.ts"
import * as Otlp from "./Otlp.ts"

/** What a worker is given. */
export interface WorkerInput {
  readonly runId: string
  readonly options: Pipeline.PipelineOptions
  readonly seed: number
  readonly storeFile: string
  readonly world: { readonly seed: number; readonly size: number }
  /** Where the worker's spans go and under which span (see `Otlp.carrier`); absent when not exporting. */
  readonly otlp?: Otlp.Carrier
}

/** What a worker answers. */
export type WorkerOutput = { readonly _tag: "Done"; readonly result: Pipeline.SeedResult } | { readonly _tag: "Failed"; readonly stage: string; readonly message: string }

/** Whether this module runs from its TypeScript source (a clone, under tsx) or from the built package (plain node). */
const fromSource = import.meta.url.endsWith(".ts")
const entry = new URL(`../programs/pipeline-worker.${fromSource ? "ts" : "js"}`, import.meta.url).href

/**
 * The bootstrap of a worker running the module at `url`: a TypeScript module registers tsx's loader first (a clone
 * has tsx installed); a built one is imported as it is.
 */
export const bootstrap = (url: string = entry): string => {
  if (!url.endsWith(".ts")) return `import(${JSON.stringify(url)})`
  const api = import.meta.resolve("tsx/esm/api")
  return `import(${JSON.stringify(api)}).then((m) => { m.register(); return import(${JSON.stringify(url)}) })`
}

/** A seed runner that starts one worker per seed. */
export const runner = (input: Omit<WorkerInput, "seed" | "otlp">): Pipeline.SeedRunner => (seed) =>
  Effect.flatMap(Otlp.carrier, (otlp) => Effect.callback<Pipeline.SeedResult, Pipeline.PipelineError>((resume) => {
    // a worker's progress bars would interleave with its siblings': the main thread shows one bar over the seeds
    const workerData: WorkerInput = { ...input, options: { ...input.options, progress: false }, seed, ...(otlp !== undefined ? { otlp } : {}) }
    const worker = new Worker(bootstrap(), { eval: true, workerData })
    let settled = false
    worker.on("message", (message: WorkerOutput) => {
      settled = true
      resume(message._tag === "Done" ? Effect.succeed(message.result) : Effect.fail(new Pipeline.PipelineError({ stage: message.stage, message: message.message })))
      void worker.terminate()
    })
    worker.on("error", (error) => {
      if (settled) return
      settled = true
      resume(Effect.fail(new Pipeline.PipelineError({ stage: `seed ${seed}`, message: `the worker failed: ${error.message}` })))
    })
    worker.on("exit", (code) => {
      if (settled) return
      settled = true
      resume(Effect.fail(new Pipeline.PipelineError({ stage: `seed ${seed}`, message: `the worker exited with code ${code} before answering` })))
    })
    // interruption (Ctrl-C, a sibling seed failing) stops the worker
    return Effect.promise(() => worker.terminate())
  }))

/**
 * The worker-thread entrypoint of one pipeline seed (started by layers/PipelineWorkers.ts, never run by hand): builds
 * the application and the run store over the shared SQLite file, runs the seed (its spans exported when the main
 * thread exports), and posts the result back once the exporter has posted its last spans.
 */
import { Cause, Effect, Exit, Layer } from "effect"
import { parentPort, workerData } from "node:worker_threads"
import * as App from "../layers/App.ts"
import * as Otlp from "../layers/Otlp.ts"
import type { WorkerInput, WorkerOutput } from "../layers/PipelineWorkers.ts"
import * as RunStoreSqlite from "../layers/storage/RunStoreSqlite.ts"
import * as Pipeline from "../src/training/Pipeline.ts"

const input = workerData as WorkerInput
const layer = Layer.merge(
  App.layer({ world: { seed: input.world.seed, size: input.world.size }, tasks: { holdoutTools: true } }),
  RunStoreSqlite.layer(input.storeFile)
)
const program = Pipeline.runSeed(input.runId, input.options, input.seed).pipe(Effect.provide(layer), Otlp.inWorker(input.otlp, `pipeline seed ${input.seed}`))

void Effect.runPromiseExit(program).then((exit) => {
  const output: WorkerOutput = Exit.isSuccess(exit)
    ? { _tag: "Done", result: exit.value }
    : (() => {
      const error = Cause.squash(exit.cause)
      const stage = typeof error === "object" && error !== null && "stage" in error ? String((error as { stage: unknown }).stage) : `seed ${input.seed}`
      const message = error instanceof Error ? error.message : String(error)
      return { _tag: "Failed", stage, message }
    })()
  parentPort?.postMessage(output)
})

/**
 * A worker-thread entrypoint for the OTLP tests: runs two nested spans under `Otlp.inWorker` with the carrier it was
 * given (the way programs/pipeline-worker.ts runs a seed), then posts "done" once the exporter has closed.
 */
import { Effect } from "effect"
import { parentPort, workerData } from "node:worker_threads"
import * as Otlp from "../../layers/Otlp.ts"

const input = workerData as { readonly otlp?: Otlp.Carrier }
const program = Effect.void.pipe(
  Effect.withSpan("Worker.inner", { attributes: { "worker.step": 2 } }),
  Effect.withSpan("Worker.seed", { attributes: { "worker.step": 1 } }),
  Otlp.inWorker(input.otlp, "test worker")
)
void Effect.runPromise(program).then(() => parentPort?.postMessage("done"))

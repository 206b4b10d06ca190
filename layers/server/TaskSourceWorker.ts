/**
 * The generated world's TaskSource with its draws on a worker thread, for the ToolEnv server: a draw can take seconds
 * (10,000 tasks for `index` 9,999 under a new seed; the world's entity tables are built the first time a draw touches
 * them, up to a second each), and on the server's thread that would stall every other client. The worker builds the
 * same world (deterministic from its seed and size: the tasks are those of `TaskSource.layerGenerated`), starts on the
 * first draw, keeps recent whole draws for `sampleAt` (a session created at `split` + `index` takes one task across), and exits after `idleMs` without one, giving its memory back. A worker that dies fails the draws in
 * flight (a defect: the server's 500) and is started again by the next draw.
 */
import { Effect, Layer } from "effect"
import { Worker } from "node:worker_threads"
import type { Task } from "../../src/domain/Task.ts"
import { TaskSource } from "../../src/toolenv/TaskSource.ts"
import type { SampleOptions, TaskPosition } from "../../src/toolenv/TaskSource.ts"
import { bootstrap } from "../PipelineWorkers.ts"

/** What the worker is given. */
export interface DrawWorkerInput {
  readonly world: { readonly seed: number; readonly size: number }
  readonly holdoutTools: boolean
}

/** A draw asked of the worker. */
export type DrawRequest =
  | { readonly id: number; readonly kind: "sample"; readonly options: SampleOptions }
  | { readonly id: number; readonly kind: "drawAt"; readonly position: TaskPosition }
  | { readonly id: number; readonly kind: "sampleAt"; readonly options: SampleOptions; readonly index: number }

/** The worker's answer to a request. */
export type DrawReply =
  | { readonly id: number; readonly _tag: "Done"; readonly value: unknown }
  | { readonly id: number; readonly _tag: "Failed"; readonly message: string }

/** The worker's module: its TypeScript source in a clone (under tsx), the built JavaScript in the installed package. */
const entry = new URL(`../../programs/task-draw-worker.${import.meta.url.endsWith(".ts") ? "ts" : "js"}`, import.meta.url).href

/** Options of the worker-backed source. */
export interface Options extends DrawWorkerInput {
  /** The worker exits after this long without a draw (default 2 minutes). */
  readonly idleMs?: number
}

/** The TaskSource whose draws run on a worker thread (see the module header). */
export const layer = (options: Options): Layer.Layer<TaskSource> =>
  Layer.effect(TaskSource, Effect.gen(function*() {
    const idleMs = options.idleMs ?? 120_000
    let worker: Worker | undefined
    let nextId = 0
    let idleTimer: ReturnType<typeof setTimeout> | undefined
    const pending = new Map<number, (reply: DrawReply) => void>()

    const stop = () => {
      if (idleTimer !== undefined) clearTimeout(idleTimer)
      idleTimer = undefined
      const w = worker
      worker = undefined
      if (w !== undefined) void w.terminate()
    }
    const armIdle = () => {
      if (idleTimer !== undefined) clearTimeout(idleTimer)
      idleTimer = pending.size === 0 ? setTimeout(stop, idleMs) : undefined
      idleTimer?.unref()
    }
    const failAll = (message: string) => {
      for (const [id, resume] of pending) resume({ id, _tag: "Failed", message })
      pending.clear()
    }
    const start = (): Worker => {
      const w = new Worker(bootstrap(entry), { eval: true, workerData: { world: options.world, holdoutTools: options.holdoutTools } satisfies DrawWorkerInput })
      // the server's exit does not wait for an idle draw worker
      w.unref()
      w.on("message", (reply: DrawReply) => {
        const resume = pending.get(reply.id)
        if (resume === undefined) return
        pending.delete(reply.id)
        resume(reply)
        armIdle()
      })
      // only the current worker's end concerns the draws in flight (an idle one stopped on purpose has none)
      w.on("error", (e) => {
        if (worker !== w) return
        worker = undefined
        failAll(`the task-draw worker failed: ${e.message}`)
      })
      w.on("exit", (code) => {
        if (worker !== w) return
        worker = undefined
        failAll(`the task-draw worker exited (code ${code}) with draws in flight`)
      })
      return w
    }
    yield* Effect.addFinalizer(() => Effect.sync(() => {
      failAll("the server is closing")
      stop()
    }))

    const ask = <A>(request: DrawRequest extends infer R ? R extends DrawRequest ? Omit<R, "id"> : never : never): Effect.Effect<A> =>
      Effect.callback<A>((resume) => {
        const id = nextId++
        if (idleTimer !== undefined) clearTimeout(idleTimer)
        idleTimer = undefined
        pending.set(id, (reply) =>
          resume(reply._tag === "Done" ? Effect.succeed(reply.value as A) : Effect.die(new Error(reply.message))))
        worker ??= start()
        worker.postMessage({ ...request, id } as DrawRequest)
        // an interrupted request (its client went away) no longer waits; the worker's answer is dropped
        return Effect.sync(() => {
          pending.delete(id)
          armIdle()
        })
      })

    return TaskSource.of({
      sample: (o) => ask<ReadonlyArray<Task>>({ kind: "sample", options: o }).pipe(Effect.withSpan("TaskSource.sample")),
      drawAt: (position) => ask<Task | undefined>({ kind: "drawAt", position }),
      // one task crosses to this thread, not the draw before it (deserialising 10,000 tasks held it for seconds)
      sampleAt: (o, index) => ask<Task | undefined>({ kind: "sampleAt", options: o, index }).pipe(Effect.withSpan("TaskSource.sampleAt"))
    })
  }))

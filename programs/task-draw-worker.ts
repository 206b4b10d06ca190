/**
 * The worker-thread entrypoint of the ToolEnv server's task draws (started by layers/server/TaskSourceWorker.ts, never run by
 * hand): builds the same generated world as the server, then answers draw requests. Requests run side by side in
 * slices of a few milliseconds, so a 100-task listing is not queued behind a 10,000-task draw.
 */
import { parentPort, workerData } from "node:worker_threads"
import * as Tasks from "../src/toolenv/world/Tasks.ts"
import * as World from "../src/toolenv/world/World.ts"
import type { DrawReply, DrawRequest, DrawWorkerInput } from "../layers/server/TaskSourceWorker.ts"

const input = workerData as DrawWorkerInput
const generator = Tasks.make(World.make({ seed: input.world.seed, size: input.world.size }), { holdoutTools: input.holdoutTools })
const port = parentPort
if (port === null) throw new Error("programs/task-draw-worker.ts runs as a worker thread of the ToolEnv server")

interface Job {
  readonly id: number
  readonly steps: Generator<void, ReadonlyArray<unknown> | unknown>
}
const jobs: Array<Job> = []
let running = false

const reply = (message: DrawReply) => port.postMessage(message)

/** Whole draws by their options, for `sampleAt` (sessions created at `index` 0, 1, 2… of one draw): at most 10,000 tasks. */
const draws = new Map<string, ReadonlyArray<unknown>>()
let drawnTasks = 0
const maxDrawnTasks = 10_000
const keep = (key: string, tasks: ReadonlyArray<unknown>) => {
  if (tasks.length > maxDrawnTasks) return
  draws.set(key, tasks)
  drawnTasks += tasks.length
  while (drawnTasks > maxDrawnTasks) {
    const oldest = draws.keys().next().value as string
    drawnTasks -= draws.get(oldest)?.length ?? 0
    draws.delete(oldest)
  }
}

const jobOf = (request: DrawRequest): Job => {
  if (request.kind === "sample") return { id: request.id, steps: generator.takeStepwise(request.options) }
  if (request.kind === "sampleAt") {
    const { options, index } = request
    const key = JSON.stringify([options.split, options.count, options.levels ?? null, options.seed ?? null])
    return {
      id: request.id,
      steps: (function*() {
        let tasks = draws.get(key)
        if (tasks === undefined) {
          tasks = yield* generator.takeStepwise(options)
          keep(key, tasks)
        }
        return tasks[index]
      })()
    }
  }
  const { split, level, index, seed } = request.position
  return { id: request.id, steps: (function*() { return generator.draw(split, level, index, seed) })() }
}

/** Advances every job round-robin, each for a slice of at most a few milliseconds, yielding to messages in between. */
const run = () => {
  running = true
  const job = jobs.shift()
  if (job === undefined) {
    running = false
    return
  }
  const sliceStart = performance.now()
  try {
    for (;;) {
      const next = job.steps.next()
      if (next.done === true) {
        reply({ id: job.id, _tag: "Done", value: next.value })
        break
      }
      if (performance.now() - sliceStart >= 4) {
        jobs.push(job)
        break
      }
    }
  } catch (e) {
    reply({ id: job.id, _tag: "Failed", message: e instanceof Error ? e.message : String(e) })
  }
  setImmediate(run)
}

port.on("message", (request: DrawRequest) => {
  jobs.push(jobOf(request))
  if (!running) setImmediate(run)
})

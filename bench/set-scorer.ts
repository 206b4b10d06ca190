/**
 * What the set scorer's factored first layer saves (`SetScorer.forward` / `backward`): the summaries' share of the
 * head's first layer computed once per set, and a row's zero columns skipped. The shipped policy is rolled out on
 * training tasks of the default world (ParaAct), every visited state is labelled by the student-space oracle (a DAgger
 * round's data), and the states are scored in stacked minibatches of 64 (as cloning and PPO score them) two ways side by
 * side in one process: the set scorer, and the dense reference — the head as one MLP over every row's concatenated
 * [row | encoding | mean | max] (the definition, and how the scorer computed it before 2026-12-04). Prints the CPU
 * milliseconds (user) of a forward and a backward pass over every minibatch for each, their ratio, and the largest
 * difference of the logits and the gradients (the same function summed in another order). A third way is the set
 * scorer's kernels as plain loops, one output at a time (`test/math/SetScorerPlain.ts`, the code before 2026-12-05's
 * blocked kernels): its CPU, the blocked kernels' ratio to it, and whether every logit and gradient is the same bit for
 * bit (it must be).
 * Run: `npx tsx bench/set-scorer.ts [--tasks 40] [--repeats 3]`.
 */
import { Effect } from "effect"
import { Flag } from "effect/cli"
import * as BenchFlags from "./BenchFlags.ts"
import * as App from "../layers/App.ts"
import * as LearnedPolicy from "../src/agent/LearnedPolicy.ts"
import * as StudentOracle from "../src/agent/StudentOracle.ts"
import * as RunConfig from "../src/eval/RunConfig.ts"
import * as Mlp from "../src/math/Mlp.ts"
import { hashParts } from "../src/math/Random.ts"
import * as SetScorer from "../src/math/SetScorer.ts"
import * as Rollout from "../src/runtime/Rollout.ts"
import { TaskSource } from "../src/toolenv/TaskSource.ts"
import { GeneratedWorld } from "../src/toolenv/world/World.ts"
import * as Dagger from "../src/training/Dagger.ts"
import { sameBits } from "../test/support/Bits.ts"
import * as Plain from "../test/math/SetScorerPlain.ts"

const flags = await BenchFlags.parse("set-scorer", "the set scorer's factored first layer against the dense head over concatenated rows", {
  tasks: Flag.Int("tasks").pipe(Flag.withSchema(RunConfig.IntIn({ minimum: 1, maximum: 1000 })), Flag.withDescription("training tasks rolled out"), Flag.withDefault(40)),
  repeats: Flag.Int("repeats").pipe(Flag.withSchema(RunConfig.IntIn({ minimum: 1, maximum: 100 })), Flag.withDescription("passes over the minibatches per way (alternating)"), Flag.withDefault(3))
})

/** The dense reference: encodings and summaries, every row's [row | encoding | mean | max] concatenated, the head as one MLP. */
const dense = (params: SetScorer.Params, x: Float64Array, rows: number, sets: SetScorer.Sets) => {
  const { input, encoder } = params.shape
  const w = encoder.width
  const learned = encoder.kind === "learned"
  const h = new Float64Array(rows * w)
  for (let r = 0; r < rows; r++) {
    for (let j = 0; j < w; j++) {
      if (encoder.kind === "identity") {
        h[r * w + j] = x[r * input + encoder.from + j] as number
        continue
      }
      let z = params.data[w * input + j] as number
      for (let i = 0; i < input; i++) z += (params.data[j * input + i] as number) * (x[r * input + i] as number)
      h[r * w + j] = Math.tanh(z)
    }
  }
  const count = sets.members.length
  const mean = new Float64Array(count * w)
  const max = new Float64Array(count * w)
  const argmax = new Int32Array(count * w).fill(-1)
  sets.members.forEach((members, s) => {
    for (let j = 0; j < w && members.length > 0; j++) {
      let best = -Infinity
      for (const m of members) {
        const v = h[m * w + j] as number
        mean[s * w + j] = (mean[s * w + j] as number) + v / members.length
        if (v > best) {
          best = v
          argmax[s * w + j] = m
        }
      }
      max[s * w + j] = best
    }
  })
  const cols = SetScorer.headInput(params.shape)
  const wide = new Float64Array(rows * cols)
  for (let r = 0; r < rows; r++) {
    wide.set(x.subarray(r * input, (r + 1) * input), r * cols)
    if (learned) wide.set(h.subarray(r * w, (r + 1) * w), r * cols + input)
    const s = sets.reads[r] as number
    const at = r * cols + input + (learned ? w : 0)
    if (s >= 0) {
      wide.set(mean.subarray(s * w, (s + 1) * w), at)
      wide.set(max.subarray(s * w, (s + 1) * w), at + w)
    }
  }
  const headParams: Mlp.Params = { shape: SetScorer.headShape(params.shape), data: params.data.subarray(SetScorer.encoderSize(params.shape)) }
  const out = Mlp.forward(headParams, wide, rows)
  const backward = (dLogits: Float64Array): Float64Array => {
    const grad = new Float64Array(params.data.length)
    const dWide = new Float64Array(rows * cols)
    Mlp.backward(headParams, out.trace, dLogits, grad.subarray(SetScorer.encoderSize(params.shape)), dWide)
    if (!learned) return grad
    const dh = new Float64Array(rows * w)
    for (let r = 0; r < rows; r++) {
      const s = sets.reads[r] as number
      for (let j = 0; j < w; j++) {
        dh[r * w + j] = (dh[r * w + j] as number) + (dWide[r * cols + input + j] as number)
        if (s < 0) continue
        const members = sets.members[s] as ReadonlyArray<number>
        const dMean = dWide[r * cols + input + w + j] as number
        for (const m of members) dh[m * w + j] = (dh[m * w + j] as number) + dMean / members.length
        const arg = argmax[s * w + j] as number
        if (arg >= 0) dh[arg * w + j] = (dh[arg * w + j] as number) + (dWide[r * cols + input + 2 * w + j] as number)
      }
    }
    for (let r = 0; r < rows; r++) {
      for (let j = 0; j < w; j++) {
        const hv = h[r * w + j] as number
        const g = (dh[r * w + j] as number) * (1 - hv * hv)
        grad[w * input + j] = (grad[w * input + j] as number) + g
        for (let i = 0; i < input; i++) grad[j * input + i] = (grad[j * input + i] as number) + g * (x[r * input + i] as number)
      }
    }
    return grad
  }
  return { logits: out.logits, backward }
}

const program = Effect.gen(function*() {
  const tasks = yield* (yield* TaskSource).sample({ split: "train", count: flags.tasks, levels: ["I1", "I2", "I3"], seed: 1 })
  const rollout = yield* Rollout.Rollout
  const student = yield* rollout.runAll(tasks.map((task) => ({ task, options: { paradigm: "ParaAct" as const, seed: hashParts(1, task.id) & 0x3fffffff } })), { concurrency: 8 })
  const equivalent = StudentOracle.worldEquivalence((yield* GeneratedWorld).ops)
  const states = yield* Dagger.labelTrajectories(student, new Map(tasks.map((t) => [t.id as string, t])), Rollout.defaultConfig.maxRounds, equivalent)
  const params = LearnedPolicy.initial(1).params
  const input = params.shape.input
  // minibatches of 64 states stacked as one matrix, as cloning and PPO score them
  const batches = Array.from({ length: Math.ceil(states.length / 64) }, (_, b) => {
    const part = states.slice(b * 64, (b + 1) * 64)
    let rows = 0
    const offsets = part.map((s) => (rows += s.layout.rows) - s.layout.rows)
    const x = new Float64Array(rows * input)
    part.forEach((s, i) => x.set(s.x.subarray(0, s.layout.rows * input), (offsets[i] as number) * input))
    const sets = SetScorer.stackSets(part.map((s, i) => ({ sets: s.layout.sets, rows: s.layout.rows, offset: offsets[i] as number })))
    const dLogits = Float64Array.from({ length: rows }, (_, r) => Math.sin(r + b))
    return { x, rows, sets, dLogits }
  })
  const rows = batches.reduce((n, b) => n + b.rows, 0)
  const cpu = () => process.cpuUsage().user / 1000
  let scorerMs = 0
  let denseMs = 0
  let plainMs = 0
  let same = true
  let logitDiff = 0
  let gradDiff = 0
  for (let k = 0; k < flags.repeats; k++) {
    let t0 = cpu()
    const fast = batches.map((b) => {
      const { logits, trace } = SetScorer.forward(params, b.x, b.rows, b.sets)
      return { logits, grad: SetScorer.backward(params, trace, b.dLogits) }
    })
    scorerMs += cpu() - t0
    t0 = cpu()
    const slow = batches.map((b) => {
      const d = dense(params, b.x, b.rows, b.sets)
      return { logits: d.logits, grad: d.backward(b.dLogits) }
    })
    denseMs += cpu() - t0
    t0 = cpu()
    const plain = batches.map((b) => {
      const { logits, trace } = Plain.forward(params, b.x, b.rows, b.sets)
      return { logits, grad: Plain.backward(params, trace, b.dLogits) }
    })
    plainMs += cpu() - t0
    fast.forEach((f, i) => {
      const p = plain[i] as (typeof plain)[number]
      same &&= sameBits(f.logits, p.logits) && sameBits(f.grad, p.grad)
    })
    fast.forEach((f, i) => {
      const s = slow[i] as (typeof slow)[number]
      f.logits.forEach((z, r) => (logitDiff = Math.max(logitDiff, Math.abs(z - (s.logits[r] as number)))))
      f.grad.forEach((g, p) => (gradDiff = Math.max(gradDiff, Math.abs(g - (s.grad[p] as number)) / Math.max(1, Math.abs(g)))))
    })
  }
  console.log(`${states.length} labelled states (${rows} rows, ${batches.length} minibatches of 64) × ${flags.repeats}: set scorer ${scorerMs.toFixed(0)} ms CPU, ` +
    `dense head ${denseMs.toFixed(0)} ms, ratio ${(scorerMs / denseMs).toFixed(2)}×; largest difference: logits ${logitDiff.toExponential(1)}, gradients ${gradDiff.toExponential(1)} (relative)`)
  console.log(`plain kernels (one output at a time) ${plainMs.toFixed(0)} ms CPU; the set scorer's blocked kernels ${(scorerMs / plainMs).toFixed(2)}× of it, ` +
    `logits and gradients ${same ? "the same bit for bit" : "DIFFERENT"}`)
  if (!same) process.exitCode = 1
})

await Effect.runPromise(program.pipe(Effect.provide(App.layer({ tasks: { holdoutTools: true }, policy: { kind: "paraagent" } })), Effect.orDie) as Effect.Effect<void>)

/**
 * The LLM judges over an OpenAI-compatible endpoint: the Q/F/U judge (one chat call at temperature 0, the three verdicts
 * as JSON decoded with Schema; a malformed reply gets one repair request, then a JudgeError), and StableToolBench's
 * pass-rate judge (Solved / Unsure / Unsolved; `makePassRate`).
 */
import { Effect, Layer } from "effect"
import type { Task } from "../../src/domain/Task.ts"
import type { Trajectory, Verdict } from "../../src/domain/Trajectory.ts"
import { Judge, JudgeError } from "../../src/judge/Judge.ts"
import * as Prompt from "../../src/judge/Prompt.ts"
import * as StbJudge from "../../src/benchmarks/stabletoolbench/StableToolBenchJudge.ts"
import { OpenAiClient, type OpenAiConfigInput, type WireMessage, layerConfig as clientLayerConfig } from "./OpenAiClient.ts"

/** Options of the LLM judge. */
export interface JudgeLlmOptions {
  /** Show the task's gold facts to the judge as a reference (default false). */
  readonly reference?: boolean
  /** Ask the server for a JSON object (`response_format: json_object`); most servers support it (default false). */
  readonly jsonMode?: boolean
  /** Completion budget per call (default: the client's, 2048). */
  readonly maxTokens?: number
}

/** The judge's decoding temperature (spec §5). */
export const TEMPERATURE = 0

/** Builds the judge over the OpenAiClient in context. */
export const make = Effect.fnUntraced(function*(options: JudgeLlmOptions = {}) {
  const client = yield* OpenAiClient
  const name = `llm:${client.model}`

  const ask = (messages: ReadonlyArray<WireMessage>) =>
    client.chat({
      messages,
      temperature: TEMPERATURE,
      ...(options.maxTokens === undefined ? {} : { maxTokens: options.maxTokens }),
      ...(options.jsonMode === true ? { responseFormat: { type: "json_object" as const } } : {})
    }).pipe(
      Effect.mapError((error) => new JudgeError({ message: `${name}: ${error.message}` }))
    )

  const read = (content: string) =>
    Prompt.decodeReply(Prompt.extractJsonObject(content)).pipe(Effect.mapError((error) => error.message))

  const judge = Effect.fn("JudgeLlm.judge")(function*(task: Task, trajectory: Trajectory) {
    const messages: Array<WireMessage> = [
      { role: "system", content: Prompt.systemPrompt },
      { role: "user", content: Prompt.userPrompt(task, trajectory, options.reference === true ? { reference: true } : {}) }
    ]
    const first = yield* ask(messages)
    const firstReply = yield* Effect.result(read(first.content))
    const reply = firstReply._tag === "Success"
      ? firstReply.success
      : yield* ask([
        ...messages,
        { role: "assistant", content: first.content },
        { role: "user", content: Prompt.repairPrompt(firstReply.failure) }
      ]).pipe(
        Effect.flatMap((second) =>
          read(second.content).pipe(
            Effect.mapError((problem) =>
              new JudgeError({ message: `${name}: malformed verdict twice for trajectory ${trajectory.id}: ${problem}` })
            )
          )
        )
      )
    const verdict: Verdict = {
      quality: reply.quality.verdict,
      faithfulness: reply.faithfulness.verdict,
      utility: reply.utility.verdict,
      rationale: Prompt.joinRationale(reply),
      judge: name
    }
    return verdict
  })

  return Judge.of({ name, judge })
})

/** The LLM judge over an OpenAiClient provided elsewhere. */
export const layer = (options: JudgeLlmOptions = {}): Layer.Layer<Judge, never, OpenAiClient> => Layer.effect(Judge, make(options))

/** The LLM judge with its client configured from the environment (and flag overrides). */
export const layerConfig = (options: JudgeLlmOptions = {}, overrides: Partial<OpenAiConfigInput> = {}) =>
  layer(options).pipe(Layer.provide(clientLayerConfig(overrides)))

/** Options of the pass-rate judge. */
export interface PassRateJudgeOptions {
  /** Ask the server for a JSON object (`response_format: json_object`) (default false). */
  readonly jsonMode?: boolean
  /** Completion budget per call (default: the client's). */
  readonly maxTokens?: number
  /** Sampling temperature (default: the client's, so repeated evaluations are independent samples as in StableToolEval). */
  readonly temperature?: number
}

/**
 * The StableToolBench pass-rate judge over the OpenAiClient in context (src/benchmarks/stabletoolbench/StableToolBenchJudge.ts): the query
 * and final answer first; an Unsure answer again with its tool evidence. An unreadable reply is asked once more; a
 * second one, or an endpoint failure, is Unsolved with the failure recorded — never an error of the run.
 */
export const makePassRate = Effect.fnUntraced(function*(options: PassRateJudgeOptions = {}) {
  const client = yield* OpenAiClient
  const name = `llm-pass-rate:${client.model}`
  type Stage = { readonly _tag: "label"; readonly status: StbJudge.LabelResult["status"]; readonly reason: string } | { readonly _tag: "failed"; readonly failure: string }

  const ask = (user: string) =>
    client.chat({
      messages: [{ role: "system", content: StbJudge.systemPrompt }, { role: "user", content: user }],
      ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
      ...(options.maxTokens === undefined ? {} : { maxTokens: options.maxTokens }),
      ...(options.jsonMode === true ? { responseFormat: { type: "json_object" as const } } : {})
    }).pipe(
      Effect.map((reply) => StbJudge.readLabel(reply.content)),
      Effect.catchTag("OpenAiError", (error) => Effect.succeed({ _tag: "endpoint" as const, problem: error.message }))
    )

  const stage = (user: string): Effect.Effect<Stage> =>
    Effect.gen(function*() {
      let problem = ""
      for (let attempt = 0; attempt < 2; attempt++) {
        const read = yield* ask(user)
        if (read._tag === "label") return read
        problem = read.problem
        if (read._tag === "endpoint") break
      }
      return { _tag: "failed", failure: `${name}: ${problem}` }
    })

  const label = Effect.fn("JudgeLlm.passRate")(function*(query: string, trajectory: Trajectory) {
    const first = yield* stage(StbJudge.answerPrompt(query, trajectory.answer ?? ""))
    const final = first._tag === "label" && first.status === "Unsure" ? yield* stage(StbJudge.detailPrompt(query, trajectory)) : first
    const result: StbJudge.LabelResult = final._tag === "label"
      ? { status: final.status, reason: final.reason }
      : { status: "Unsolved", reason: "", failure: final.failure }
    return result
  })

  return { name, label } satisfies StbJudge.Labeler
})

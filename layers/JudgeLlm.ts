/**
 * The LLM judge: one chat call at temperature 0 over an OpenAI-compatible endpoint, the three Q/F/U verdicts as JSON
 * decoded with Schema; a malformed reply gets one repair request, then a JudgeError.
 */
import { Effect, Layer } from "effect"
import type { Task } from "../src/domain/Task.ts"
import type { Trajectory, Verdict } from "../src/domain/Trajectory.ts"
import { Judge, JudgeError } from "../src/judge/Judge.ts"
import * as Prompt from "../src/judge/Prompt.ts"
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

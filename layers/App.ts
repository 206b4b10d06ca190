/**
 * The composed application: ToolEnv (generated world, simulator, tasks), a retriever, a policy, a judge and the
 * rollout runtime, each swappable by option. Programs and examples build their layer here.
 */
import { Layer } from "effect"
import type { Ref } from "effect"
import type { ConfigError } from "../src/domain/Errors.ts"
import type * as RunConfig from "../src/eval/RunConfig.ts"
import type { Judge } from "../src/judge/Judge.ts"
import * as JudgeRule from "../src/judge/RuleJudge.ts"
import type { Policy } from "../src/agent/Policy.ts"
import { Retriever } from "../src/retrieval/Retriever.ts"
import type { RetrieverError } from "../src/retrieval/Retriever.ts"
import * as Rollout from "../src/runtime/Rollout.ts"
import * as Simulator from "../src/toolenv/Simulator.ts"
import * as TaskSource from "../src/toolenv/TaskSource.ts"
import * as LearnedPolicy from "../src/agent/LearnedPolicy.ts"
import * as Teacher from "../src/agent/Teacher.ts"
import * as ToolLibrary from "../src/toolenv/ToolLibrary.ts"
import type * as Tasks from "../src/toolenv/world/Tasks.ts"
import type * as World from "../src/toolenv/world/World.ts"
import * as JudgeLlm from "./model/JudgeLlm.ts"
import * as OpenAiClient from "./model/OpenAiClient.ts"
import type { OpenAiConfigInput } from "./model/OpenAiClient.ts"
import * as PolicyLearned from "./onnx/PolicyLearned.ts"
import * as PolicyOpenAi from "./model/PolicyOpenAi.ts"
import * as RetrieverOnnx from "./onnx/RetrieverOnnx.ts"
import * as TeacherLlm from "./model/TeacherLlm.ts"

/** Which retriever explores the library. */
export type RetrieverChoice = "bm25" | "dense" | "hybrid"

/** Which policy acts. */
export type PolicyChoice =
  | { readonly kind: "teacher"; readonly options?: Partial<Teacher.TeacherOptions> }
  | { readonly kind: "openai"; readonly options?: PolicyOpenAi.PolicyOpenAiOptions }
  | { readonly kind: "teacher-llm"; readonly options?: TeacherLlm.TeacherLlmOptions }
  | { readonly kind: "paraagent"; readonly dir?: string; readonly options?: Omit<LearnedPolicy.LearnedPolicyOptions, "scorer"> }
  | { readonly kind: "learned"; readonly weights: Ref.Ref<LearnedPolicy.Weights>; readonly options?: LearnedPolicy.LearnedPolicyOptions }

/** Everything the application layer can be built from. */
export interface AppOptions {
  readonly world?: World.WorldOptions
  readonly simulator?: Partial<Simulator.SimulatorConfig>
  readonly tasks?: Tasks.TaskOptions
  readonly retriever?: RetrieverChoice
  readonly policy?: PolicyChoice
  readonly judge?: "rule" | "llm"
  /** The OpenAI-compatible endpoint used by the `openai` policy and the `llm` judge. */
  readonly endpoint?: OpenAiConfigInput
  readonly rollout?: Partial<Rollout.RolloutConfig>
}

/** The services the application provides. */
export type Services =
  | ToolLibrary.ToolLibrary
  | World.GeneratedWorld
  | Simulator.Simulator
  | TaskSource.TaskSource
  | Retriever
  | Policy
  | Judge
  | Rollout.Rollout

/** The Retriever layer of a choice, over the ToolLibrary in context. */
export const retrieverLayer = (choice: RetrieverChoice): Layer.Layer<Retriever, RetrieverError, ToolLibrary.ToolLibrary> => {
  switch (choice) {
    case "bm25":
      return Retriever.layerBm25
    case "dense":
      return RetrieverOnnx.layerShipped
    case "hybrid":
      return RetrieverOnnx.layerHybrid()
  }
}

/**
 * The Policy layer of a choice, over the ToolLibrary in context. `endpoint` is the client the openai policy uses (pass
 * the same layer value to a judge so both share one client); teacher-llm configures its roles from `endpointInput`.
 */
export const policyLayer = (
  choice: PolicyChoice,
  endpoint: Layer.Layer<OpenAiClient.OpenAiClient, ConfigError>,
  endpointInput: OpenAiConfigInput | undefined
): Layer.Layer<Policy, ConfigError, ToolLibrary.ToolLibrary> =>
  choice.kind === "teacher"
    ? Teacher.layer(choice.options ?? {})
    : choice.kind === "openai"
    ? PolicyOpenAi.layer(choice.options ?? {}).pipe(Layer.provide(endpoint))
    : choice.kind === "learned"
    ? LearnedPolicy.layer(choice.weights, choice.options ?? {})
    : choice.kind === "paraagent"
    ? PolicyLearned.layer(choice.dir, choice.options ?? {})
    : TeacherLlm.layerConfig(choice.options ?? {}, endpointInput ?? {})

/** The client layer of an endpoint (the environment's PARAAGENT_* settings when none is given). */
export const endpointLayer = (endpoint: OpenAiConfigInput | undefined): Layer.Layer<OpenAiClient.OpenAiClient, ConfigError> =>
  endpoint === undefined ? OpenAiClient.layerConfig() : OpenAiClient.layerFrom(endpoint)

/**
 * Builds the application: the generated world (default seed 7, 50,011 tools) with its simulator (5% faults) and
 * task source, BM25 retrieval, the scripted teacher, the rule judge, and the rollout runtime (spec Table 6 defaults).
 */
export const layer = (options: AppOptions = {}): Layer.Layer<Services, ConfigError | RetrieverError> => {
  const env = ToolLibrary.layerGenerated(options.world ?? {})
  const simulator = Simulator.layer(options.simulator ?? {})
  const tasks = TaskSource.layerGenerated(options.tasks ?? {})
  const retriever = retrieverLayer(options.retriever ?? "bm25")
  // one layer value, so the openai policy and the llm judge share one client (layers are memoised by reference)
  const endpoint = endpointLayer(options.endpoint)
  const policy = policyLayer(options.policy ?? { kind: "teacher" }, endpoint, options.endpoint)
  const judge: Layer.Layer<Judge, ConfigError> = options.judge === "llm"
    ? JudgeLlm.layer().pipe(Layer.provide(endpoint))
    : JudgeRule.layer
  const agents = Layer.mergeAll(simulator, tasks, retriever, policy, judge).pipe(Layer.provideMerge(env))
  return Rollout.layer(options.rollout ?? {}).pipe(Layer.provideMerge(agents))
}

/**
 * The application options a `RunConfig` stands for (what `npm start` builds, and what a run folder's `config.json`
 * rebuilds). `endpoint` is the resolved endpoint (environment merged with flags) when the config needs one.
 */
export const optionsFromRunConfig = (config: RunConfig.RunConfig, endpoint?: OpenAiConfigInput): AppOptions => ({
  world: { seed: config.worldSeed, size: config.worldSize },
  tasks: { holdoutTools: true },
  retriever: config.retriever,
  policy: config.policy === "teacher"
    ? { kind: "teacher", options: { mistakeRate: config.mistakeRate } }
    : config.policy === "openai"
    ? { kind: "openai", options: { mode: config.mode } }
    : config.policy === "paraagent"
    ? { kind: "paraagent" }
    : { kind: "teacher-llm" },
  judge: config.judge,
  ...(endpoint !== undefined ? { endpoint } : {}),
  simulator: { faultRate: config.faultRate },
  rollout: { maxRounds: config.maxRounds, faults: config.faults, lenient: config.policy === "openai" }
})

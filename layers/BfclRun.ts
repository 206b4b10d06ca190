/**
 * Runs `bfcl generate` with a policy the programs' `--policy` choice names: the embedded learned policy and the
 * OpenAI-compatible policy are built once; the teachers (which look tools up in a ToolLibrary) get each entry's
 * functions as their library.
 */
import { Effect, Layer } from "effect"
import type { ConfigError } from "../src/domain/Errors.ts"
import type { ToolSpec } from "../src/domain/Tool.ts"
import * as Teacher from "../src/agent/Teacher.ts"
import { Policy } from "../src/agent/Policy.ts"
import * as Generate from "../src/benchmarks/bfcl/BfclGenerate.ts"
import type * as Score from "../src/benchmarks/bfcl/BfclScore.ts"
import * as DepGraph from "../src/toolenv/DepGraph.ts"
import { makeLibrary, ToolLibrary } from "../src/toolenv/ToolLibrary.ts"
import * as OpenAiClient from "./model/OpenAiClient.ts"
import type { OpenAiConfigInput } from "./model/OpenAiClient.ts"
import * as PolicyLearned from "./onnx/PolicyLearned.ts"
import * as PolicyOpenAi from "./model/PolicyOpenAi.ts"
import * as TeacherLlm from "./model/TeacherLlm.ts"

/** The policies `generate` can run (the programs' `--policy` choices). */
export type PolicyChoice =
  | { readonly kind: "paraagent"; readonly dir?: string }
  | { readonly kind: "openai"; readonly mode: "text" | "native"; readonly endpoint: OpenAiConfigInput }
  | { readonly kind: "teacher" }
  | { readonly kind: "teacher-llm"; readonly endpoint: OpenAiConfigInput }
  /** A policy layer of your own (tests, a user's policy). */
  | { readonly kind: "layer"; readonly layer: Layer.Layer<Policy, ConfigError> }

const libraryOf = (label: string, tools: ReadonlyArray<ToolSpec>) => Layer.succeed(ToolLibrary, makeLibrary(label, tools, DepGraph.empty))

/** One category's entries answered (the first `limit` of them when given), `concurrency` entries at a time. */
export const generateCategory = (
  category: Score.Category,
  choice: PolicyChoice,
  options: Generate.GenerateOptions & { readonly concurrency: number; readonly limit?: number }
): Effect.Effect<ReadonlyArray<Generate.Generated>, ConfigError> => {
  const entries = options.limit === undefined ? category.entries : category.entries.slice(0, options.limit)
  const one = (entry: Score.TestEntry) => Generate.generateEntry(category.name, entry, category.answers?.get(entry.id), options)
  const perEntry = (policyFor: (tools: ReadonlyArray<ToolSpec>) => Layer.Layer<Policy, ConfigError>) =>
    Effect.forEach(entries, (entry) => Effect.provide(one(entry), policyFor(Generate.toolsOf(category.name, entry))), { concurrency: options.concurrency })
  const shared = (layer: Layer.Layer<Policy, ConfigError>) =>
    Effect.gen(function*() {
      const context = yield* Layer.build(layer)
      return yield* Effect.forEach(entries, (entry) => Effect.provideContext(one(entry), context), { concurrency: options.concurrency })
    }).pipe(Effect.scoped)
  switch (choice.kind) {
    case "paraagent":
      return shared(PolicyLearned.layer(choice.dir, { decoding: "greedy" }))
    case "openai":
      return shared(PolicyOpenAi.layer({ mode: choice.mode, lenient: true }).pipe(Layer.provide(OpenAiClient.layerFrom(choice.endpoint))))
    case "layer":
      return shared(choice.layer)
    case "teacher":
      return perEntry((tools) => Teacher.layer({ mistakeRate: 0 }).pipe(Layer.provide(libraryOf("bfcl", tools))))
    case "teacher-llm": {
      const client = OpenAiClient.layerFrom(choice.endpoint)
      return perEntry((tools) => TeacherLlm.layer().pipe(Layer.provide(Layer.mergeAll(client, libraryOf("bfcl", tools)))))
    }
  }
}

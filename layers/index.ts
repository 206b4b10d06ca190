/**
 * Layers that bring a real dependency (files, ONNX, HTTP, SQLite) and the composed application layers.
 */
export * as OpenAiClient from "./OpenAiClient.ts"
export * as JudgeLlm from "./JudgeLlm.ts"
export * as PolicyOpenAi from "./PolicyOpenAi.ts"
export * as PolicyScorerOnnx from "./PolicyScorerOnnx.ts"
export * as RetrieverOnnx from "./RetrieverOnnx.ts"
export * as ToolLibraryFiles from "./ToolLibraryFiles.ts"
export * as BfclFiles from "./BfclFiles.ts"
export * as BfclRun from "./BfclRun.ts"
export * as TeacherLlm from "./TeacherLlm.ts"
export * as App from "./App.ts"
export * as SimulatorLlm from "./SimulatorLlm.ts"
export * as RenderCacheSqlite from "./RenderCacheSqlite.ts"
export * as RunStoreSqlite from "./RunStoreSqlite.ts"
export * as ParquetVerl from "./ParquetVerl.ts"

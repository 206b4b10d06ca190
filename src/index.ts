/**
 * ParaAgent's public API: every module as a namespace, so pipelines are composed in code.
 * `import { Reward, Rollout } from "paraagent"`; layers that bring a real dependency are under "paraagent/layers".
 */
export * as Domain from "./domain/index.ts"
export * as DepGraph from "./DepGraph.ts"
export * as Judge from "./Judge.ts"
export * as Policy from "./Policy.ts"
export * as Retriever from "./Retriever.ts"
export * as Simulator from "./Simulator.ts"
export * as TaskSource from "./TaskSource.ts"
export * as ToolLibrary from "./ToolLibrary.ts"
export * as CanonicalJson from "./math/CanonicalJson.ts"
export * as DataPath from "./DataPath.ts"
export * as Random from "./math/Random.ts"
export * as Importer from "./importers/Report.ts"
export * as JsonSchemaImport from "./importers/JsonSchemaImport.ts"
export * as ToolBench from "./importers/ToolBench.ts"
export * as StableToolBench from "./importers/StableToolBench.ts"
export * as ParaAct from "./ParaAct.ts"
export * as ParaActJson from "./ParaActJson.ts"
export * as Refs from "./Refs.ts"
export * as RuleJudge from "./judge/RuleJudge.ts"
export * as JudgeText from "./judge/Text.ts"

import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { repoRoot } from "../src/io/DataPath.ts"
import * as Api from "../src/index.ts"

describe("public API", () => {
  it("exports every module as a namespace", () => {
    for (const name of ["Domain", "ParaAct", "Refs", "PlanDag", "History", "Controller", "Reward", "Advantage", "Rollout", "Teacher", "Scoring", "ComparisonJob", "TrajectoryFacts", "ImportReport", "Library", "RunConfig", "Cli", "ToolLibrary", "Simulator", "TaskSource", "Retriever", "Policy", "Judge", "Bm25"]) {
      assert.strictEqual(typeof (Api as Record<string, unknown>)[name], "object", name)
    }
  })

  it.effect("services with a default implementation carry it on their class", () =>
    Effect.gen(function*() {
      assert.strictEqual(Api.Retriever.Retriever.layer, Api.Retriever.Retriever.layerBm25)
      const library = yield* Effect.provide(Effect.gen(function*() {
        return yield* Api.ToolLibrary.ToolLibrary
      }), Api.ToolLibrary.ToolLibrary.layer({ seed: 3, size: 500 }))
      assert.strictEqual(library.tools.length, 500)
      const tasks = yield* Effect.provide(
        Effect.gen(function*() {
          return yield* (yield* Api.TaskSource.TaskSource).sample({ split: "test", count: 2 })
        }),
        Api.TaskSource.TaskSource.layer({ seed: 1 }).pipe(Layer.provide(Api.World.GeneratedWorld.layer({ seed: 3, size: 2_000 })))
      )
      assert.strictEqual(tasks.length, 2)
      for (const layer of [Api.Simulator.Simulator.layer(), Api.Rollout.Rollout.layer()]) assert.isTrue(Layer.isLayer(layer))
    }))

  it("is importable by name from another project", () => {
    // a consumer project with paraagent installed (as a link), importing the package and its layers by name
    const project = mkdtempSync(join(tmpdir(), "paraagent-consumer-"))
    mkdirSync(join(project, "node_modules"))
    symlinkSync(repoRoot, join(project, "node_modules", "paraagent"), "dir")
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "consumer", type: "module", private: true }))
    writeFileSync(join(project, "main.ts"), [
      `import { Reward, ParaAct } from "paraagent"`,
      `import { App } from "paraagent/layers"`,
      `const turn = ParaAct.parseTurn("<answer>42</answer>")`,
      `console.log(JSON.stringify({ rAns111: Reward.defaultRewardConfig.answer.table["111"], ok: turn._tag, app: typeof App.layer }))`
    ].join("\n"))
    const tsx = pathToFileURL(createRequire(join(repoRoot, "package.json")).resolve("tsx")).href
    const out = execFileSync(process.execPath, ["--import", tsx, "main.ts"], { cwd: project, encoding: "utf8" })
    assert.deepStrictEqual(JSON.parse(out.trim().split("\n").at(-1) ?? ""), { rAns111: 1.5, ok: "Success", app: "function" })
  })
})

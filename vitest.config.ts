import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url))

export default defineConfig({
  // the package's own name resolves to its TypeScript sources in a clone, as tsconfig.json's "paths" say for tsc and tsx
  resolve: {
    alias: [
      { find: /^paraagent$/, replacement: here("./src/index.ts") },
      { find: /^paraagent\/layers$/, replacement: here("./layers/index.ts") }
    ]
  },
  test: {
    include: ["test/**/*.test.ts"],
    // a safety net against a hang, not a speed check (test/support/Bounds.ts): tests wait on events, and a loaded
    // machine may run them many times slower than a quiet one
    testTimeout: 20 * 60_000,
    hookTimeout: 20 * 60_000,
    pool: "forks",
    // vitest's default is one worker fewer than the cores: one worker on these 2-core machines; much of the suite
    // waits on spawned programs and loopback servers, so two workers use both cores
    maxWorkers: 2,
    reporters: ["default"]
  }
})

import { defineConfig } from "vitest/config"

export default defineConfig({
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

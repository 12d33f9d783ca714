import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Tests spawn real processes and servers; two cores are shared, so keep
    // parallelism modest and give each file its own process.
    pool: "forks",
    maxWorkers: 2,
  },
});

import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['__test__/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Tests start real processes and servers; two cores are all we have.
    maxWorkers: 2,
    minWorkers: 1,
  },
})

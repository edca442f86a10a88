import { defineConfig } from 'vitest/config'

// Runs the scripts that regenerate fixtures from a real Apache Kafka broker (by hand, not in
// `npm test`): `npm run capture:frames`.
export default defineConfig({
  test: {
    include: ['__test__/**/*.capture.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
})

import { defineConfig } from 'vitest/config';

// Three suites: pure unit tests, integration tests on real tmux/ssh/WebSocket/browser, and the
// reference suite that replays captures kept outside the repository.
export default defineConfig({
  test: {
    projects: [
      { test: { name: 'unit', include: ['test/unit/**/*.test.ts'] } },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          testTimeout: 30_000,
          hookTimeout: 30_000,
          fileParallelism: false,
        },
      },
      { test: { name: 'reference', include: ['test/reference/**/*.test.ts'] } },
    ],
  },
});

import { defineConfig } from 'vitest/config';

// Four suites: pure unit tests, integration tests on real tmux/ssh/WebSocket/browser, the
// reference suite that replays captures kept outside the repository, and the real agents.
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
      // The real agents (installed by tools/agents-install.mjs) in real panes against our fake
      // model servers: slow, so only `npm run test:agents` runs it.
      {
        test: {
          name: 'agents',
          include: ['test/agents/**/*.test.ts'],
          globalSetup: ['test/agents/global-setup.ts'],
          testTimeout: 240_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
    ],
  },
});

import { defineConfig } from 'vitest/config';

// Integration files that assert a latency bound or a timing window of a second or less: they run
// one at a time after everything else, on a machine no other test file is loading. Each reason is
// the bound it checks. A file named here that no longer exists fails test/unit/vitest-groups.test.ts.
export const TIMING_FILES = [
  'test/integration/notify-latency.test.ts', // p99 hub delivery <= 250 ms
  'test/integration/hook-fast-path.test.ts', // hook to frame < 290 ms / < 1 s
  'test/integration/painted-after-stamp.test.ts', // stamp age against the paint
  'test/integration/collector-ws.test.ts', // first frame < 1 s
  'test/integration/hub-ingest.test.ts', // stale at 3 heartbeats + 400 ms
  'test/integration/hub-streams.test.ts', // lag gauge between 1.5 and 3 s
  'test/integration/fleet-ws.test.ts', // stale no more than 400 ms past its deadline
  'test/integration/notify-clock-step.test.ts', // publish < 1 s after a clock step
  'test/integration/notify-journal-load.test.ts', // acks and deliveries < 1 s under load
  'test/integration/install-hooks-hostile.test.ts', // CPU and wall seconds of the installer
  // Not a timing bound: it rebuilds dist/single, which single-file and packed-install rebuild too
  // (one emptying the folder while another serves it failed a run), so it runs after them.
  'test/integration/hub-enrol.test.ts',
];

// Integration tests mostly wait on real processes (791 s wall for 5 min of CPU, one at a time),
// so they run in three workers beside the unit tests; each file has its own tmux socket folder
// and tma state (test/support/private-dirs.ts) and every port is the kernel's pick.
const WORKERS = 3;
const integration = {
  testTimeout: 30_000,
  hookTimeout: 30_000,
  setupFiles: ['test/support/private-dirs-setup.ts'],
};

// Four suites: pure unit tests, integration tests on real tmux/ssh/WebSocket/browser, the
// reference suite that replays captures kept outside the repository, and the real agents.
export default defineConfig({
  test: {
    maxWorkers: WORKERS,
    projects: [
      { test: { name: 'unit', include: ['test/unit/**/*.test.ts'] } },
      {
        test: { ...integration, name: 'integration', include: ['test/integration/**/*.test.ts'], exclude: TIMING_FILES },
      },
      {
        // `--project integration-timing` names these; `--project 'integration*'` names both.
        test: { ...integration, name: 'integration-timing', include: TIMING_FILES, fileParallelism: false, sequence: { groupOrder: 1 } },
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

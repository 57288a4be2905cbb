// The fixture screens (test/fixtures) that integration tests paint into stand-in agents.
export const SCREENS = {
  claudeIdle: 'claude-idle.txt',
  claudeWorking: 'claude-working.txt',
  claudeBlocked: 'claude-permission-dialog.txt',
  codexWorking: 'codex-working.txt',
  codexIdle: 'codex-idle.txt',
  codexBlocked: 'codex-approval-dialog.txt',
  opencodeIdle: 'opencode-idle.txt',
  opencodeWorking: 'opencode-working.txt',
  opencodeBlocked: 'opencode-permission-dialog.txt',
  geminiBlocked: 'gemini-approval-dialog.txt',
  geminiIdle: 'gemini-idle.txt',
  cursorIdle: 'cursor-idle.txt',
  piWorking: 'pi-working.txt',
  piIdle: 'pi-idle.txt',
  /** A node process whose title matches no agent. */
  plainNode: '../integration/screens/plain-node.txt',
} as const;

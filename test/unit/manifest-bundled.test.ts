// The six bundled agent manifests encode the per-agent facts of the engine spec (§7.1).

import { describe, expect, it } from 'vitest';
import { loadManifestSet } from '../../collector/core/manifest-load.js';
import { bundledManifestDir, readManifestFiles } from '../../collector/manifest-files.js';
import type { AgentManifest, Matcher, Region } from '../../collector/core/types.js';

const set = loadManifestSet(readManifestFiles(bundledManifestDir()), []);
const byName = (name: string): AgentManifest => {
  const m = set.manifests.find((x) => x.name === name);
  if (!m) throw new Error(`no manifest ${name}`);
  return m;
};

function region(r: Region): string {
  return r.kind === 'tail_lines' ? `tail_lines(${r.n})` : r.kind;
}

/** A compact rendering of a rule: state/detail priority region. */
function shape(m: AgentManifest): string[] {
  return m.rules.map((r) => `r${r.index} ${r.state}${r.detail ? '/' + r.detail : ''} p${r.priority} ${region(r.region)}${r.skipStateUpdate ? ' skip' : ''}`);
}

function matcherText(m: Matcher): string {
  switch (m.kind) {
    case 'contains':
      return `contains(${m.text})`;
    case 'regex':
    case 'line_regex':
      return `${m.kind}(${m.source})`;
    case 'any':
    case 'all':
      return `${m.kind}[${m.of.map(matcherText).join(', ')}]`;
    case 'not':
      return `not(${matcherText(m.of)})`;
  }
}

function hooks(m: AgentManifest): string[] {
  return (m.hooks?.map ?? []).map((h) => {
    const claim = h.claim.kind === 'lifecycle' ? h.claim.phase : `${h.claim.state}${h.claim.detail ? '/' + h.claim.detail : ''}`;
    return `${h.event}${h.matcher ? ` ~${h.matcher}` : ''} ${claim}${h.turnEnd ? ' turn_end' : ''}`;
  });
}

describe('bundled agent manifests', () => {
  it('load without issues, in identity order', () => {
    expect(set.issues).toEqual([]);
    expect(set.manifests.map((m) => m.name)).toEqual(['claude', 'opencode', 'codex', 'gemini', 'cursor', 'pi']);
    for (const m of set.manifests) {
      expect(m.bundled).toBe(true);
      expect(m.minEngineVersion).toBe('0.4.0');
    }
  });

  it('claude', () => {
    const m = byName('claude');
    expect(m.identity.processNames).toEqual(['claude']);
    expect(m.identity.titlePatterns).toEqual([]);
    expect(m.capture.visible).toEqual(['working', 'idle', 'blocked']);
    expect(m.telemetry.context).toEqual({ channel: 'event', format: 'claude-statusline-json' });
    expect(m.hooks?.covers).toEqual(['working', 'idle', 'blocked', 'lifecycle']);
    expect(hooks(m)).toEqual([
      'SessionStart start',
      'SessionEnd end',
      'UserPromptSubmit working',
      'PreToolUse working',
      'PostToolUse working',
      'Notification ~permission_prompt|elicitation_dialog blocked/permission',
      'PermissionRequest blocked/permission',
      'Stop idle turn_end',
    ]);
    expect(shape(m)).toEqual([
      'r0 blocked/permission p100 tail_lines(30)',
      'r1 idle p90 tail_lines(30) skip',
      'r2 working p60 title',
      'r3 idle p50 title',
      'r4 idle p40 tail_lines(6)',
      'r5 working p55 tail_lines(6)',
      'r6 blocked/auto-mode-offer p100 tail_lines(30)',
      'r7 blocked/auto-mode-check p100 tail_lines(30)',
      'r8 blocked/permission-cursor-no p100 tail_lines(30)',
      'r9 blocked/permission-cursor-yes p100 tail_lines(30)',
    ]);
    expect(m.rules.map((r) => matcherText(r.match))).toEqual([
      'line_regex(^\\s*❯ 1\\. Yes)',
      'any[contains(Select model), contains(Enter to set as default), contains(Showing detailed transcript)]',
      'regex([\\x{2800}-\\x{28FF}])',
      'contains(✳)',
      'any[contains(⏵⏵), contains(⏸)]',
      'contains(esc to interrupt)',
      'all[contains(Make auto mode your default permission mode?), line_regex(^\\s*❯ Yes, set auto mode)]',
      "all[contains(Auto mode can't check actions in this session), contains(Enter to stay in auto mode)]",
      'all[contains(Do you want to proceed?), line_regex(^\\s*❯ No\\s*$), line_regex(^\\s+Yes\\s*$)]',
      'all[contains(Do you want to proceed?), line_regex(^\\s+No\\s*$), line_regex(^\\s*❯ Yes\\s*$)]',
    ]);
  });

  it('codex', () => {
    const m = byName('codex');
    expect(m.identity.processNames).toEqual(['codex', 'codex-aarch64-a']);
    expect(m.capture.visible).toEqual(['working', 'blocked']);
    expect(m.telemetry.context).toEqual({ channel: 'file-tail', format: 'codex-rollout-jsonl' });
    expect(hooks(m)).toEqual([
      'SessionStart start',
      'SessionEnd end',
      'UserPromptSubmit working',
      'PreToolUse working',
      'PostToolUse working',
      'PermissionRequest blocked/permission',
      'Stop idle turn_end',
      'notify ~agent-turn-complete idle turn_end',
    ]);
    expect(shape(m)).toEqual([
      'r0 blocked/permission p100 tail_lines(24)',
      'r1 working p60 title',
      'r2 working p55 tail_lines(20)',
      'r3 idle p40 tail_lines(6)',
    ]);
    expect(m.rules.map((r) => matcherText(r.match))).toEqual([
      'all[contains(Would you like to run the following command?), contains(Press enter to confirm)]',
      'regex([\\x{2800}-\\x{28FF}])',
      'contains(esc to interrupt)',
      'all[line_regex(^›), not(line_regex(^› \\d+\\. ))]',
    ]);
  });

  it('opencode', () => {
    const m = byName('opencode');
    expect(m.identity.processNames).toEqual(['opencode.exe', 'opencode']);
    expect(m.capture.visible).toEqual(['blocked', 'working']);
    expect(m.telemetry.context).toBeNull();
    expect(hooks(m)).toEqual(['session-start start', 'user-prompt-submit working', 'stop idle turn_end', 'permission-required blocked/permission']);
    expect(shape(m)).toEqual(['r0 blocked/permission p100 tail_lines(24)', 'r1 working p60 visible', 'r2 idle p40 visible']);
    expect(m.rules.map((r) => matcherText(r.match))).toEqual([
      'all[contains(Permission required), contains(Allow once), contains(Reject)]',
      'contains(esc interrupt)',
      'contains(ctrl+p commands)',
    ]);
  });

  it('gemini', () => {
    const m = byName('gemini');
    expect(m.identity.processNames).toEqual(['node']);
    expect(m.identity.titlePatterns.map((p) => p.test('◇  Ready (~/src)'))).toEqual([true, false, false]);
    expect(m.identity.titlePatterns.map((p) => p.test('✦  Working… (~/src)'))).toEqual([false, true, false]);
    expect(m.identity.titlePatterns.map((p) => p.test('✋  Action Required (~/src)'))).toEqual([false, false, true]);
    // One space after the glyph is some other program's title.
    expect(m.identity.titlePatterns.some((p) => p.test('◇ Ready (~/src)'))).toBe(false);
    expect(m.capture.visible).toEqual(['working', 'blocked']);
    expect(m.telemetry.context).toBeNull();
    expect(hooks(m)).toEqual([
      'SessionStart start',
      'SessionEnd end',
      'BeforeAgent working',
      'BeforeTool working',
      'AfterTool working',
      'AfterAgent idle turn_end',
      'Notification ~ToolPermission blocked/permission',
    ]);
    expect(shape(m)).toEqual(['r0 blocked/permission p100 visible', 'r1 working p10 visible', 'r2 idle p5 tail_lines(8)', 'r3 idle p5 tail_lines(8)']);
    expect(m.rules.map((r) => matcherText(r.match))).toEqual([
      'all[contains(Allow execution of), contains(Allow once)]',
      'contains(esc to cancel)',
      'line_regex(^\\s*▀{10,}\\s*$)',
      'line_regex(^ [>!] )',
    ]);
  });

  it('cursor', () => {
    const m = byName('cursor');
    expect(m.identity.processNames).toEqual(['node', 'agent']);
    expect(m.identity.titlePatterns.map((p) => p.test('Cursor Agent'))).toEqual([true]);
    expect(m.identity.titlePatterns.map((p) => p.test('Cursor Agent - Shell'))).toEqual([false]);
    expect(m.hooks?.covers).toEqual(['working', 'idle', 'lifecycle']);
    expect(m.capture.visible).toEqual(['working', 'blocked']);
    expect(m.telemetry.context).toEqual({ channel: 'event', format: 'cursor-statusline-json' });
    expect(hooks(m)).toEqual([
      'sessionStart start',
      'sessionEnd end',
      'beforeSubmitPrompt working',
      'preToolUse working',
      'postToolUse working',
      'postToolUseFailure ~"is_interrupt":\\s*false working',
      'stop idle turn_end',
    ]);
    expect(shape(m)).toEqual(['r0 blocked/permission p100 visible', 'r1 working p10 visible', 'r2 idle p5 visible']);
    expect(m.rules.map((r) => matcherText(r.match))).toEqual([
      'all[contains(Run this command?), contains(Not in allowlist)]',
      'contains(ctrl+c to stop)',
      'all[line_regex(^\\s*▄{10,}\\s*$), line_regex(^\\s*→ )]',
    ]);
  });

  it('pi', () => {
    const m = byName('pi');
    expect(m.identity.processNames).toEqual(['node', 'pi']);
    expect(m.identity.titlePatterns.map((p) => p.test('π - ~/src'))).toEqual([true]);
    expect(m.identity.titlePatterns.map((p) => p.test('xπ - ~/src'))).toEqual([false]);
    expect(m.hooks?.covers).toEqual(['working', 'idle', 'lifecycle']);
    expect(m.capture.visible).toEqual(['working']);
    expect(m.telemetry.context).toEqual({ channel: 'event', format: 'pi-context-json' });
    expect(hooks(m)).toEqual([
      'session_start start',
      'session_shutdown end',
      'before_agent_start working',
      'agent_start working',
      'tool_execution_start working',
      'agent_end idle turn_end',
      'agent_settled idle turn_end',
    ]);
    expect(shape(m)).toEqual(['r0 working p10 visible', 'r1 idle p5 visible']);
    expect(m.rules.map((r) => matcherText(r.match))).toEqual([
      'contains(Working...)',
      'all[line_regex(^─{20,}$), line_regex((\\d+(\\.\\d+)?%|\\?)/\\d+(\\.\\d+)?[kM]?( |$))]',
    ]);
  });

  it('compiled patterns match what the agents paint', () => {
    const claude = byName('claude');
    const [r0, , r2] = claude.rules;
    if (r0?.match.kind !== 'line_regex' || r2?.match.kind !== 'regex') throw new Error('unexpected claude rule kinds');
    expect(r0.match.re.test('  ❯ 1. Yes')).toBe(true);
    expect(r0.match.re.test('    2. Yes, and don\u2019t ask again')).toBe(false);
    expect(r2.match.re.test('⠙ Working')).toBe(true);
    expect(r2.match.re.test('✳ Claude Code')).toBe(false);

    const codexIdle = byName('codex').rules[3]?.match;
    if (codexIdle?.kind !== 'all') throw new Error('codex r3 is not an all');
    const [prompt, notList] = codexIdle.of;
    if (prompt?.kind !== 'line_regex' || notList?.kind !== 'not' || notList.of.kind !== 'line_regex') {
      throw new Error('codex r3 shape');
    }
    expect(prompt.re.test('› Ask Codex')).toBe(true);
    expect(notList.of.re.test('› 1. Yes, proceed (y)')).toBe(true);
    expect(notList.of.re.test('› 12 files')).toBe(false);

    const piGauge = byName('pi').rules[1]?.match;
    if (piGauge?.kind !== 'all' || piGauge.of[1]?.kind !== 'line_regex') throw new Error('pi r1 shape');
    expect(piGauge.of[1].re.test('~/src  12.3%/200k')).toBe(true);
    expect(piGauge.of[1].re.test('~/src  12%/200k')).toBe(true);
    expect(piGauge.of[1].re.test('~/src  12%/k')).toBe(false);
    // pi 0.73 formats the window as a bare count, 9.5k, 200k, 1.0M or 2M, and shows "?" for
    // the share right after a compaction.
    for (const gauge of ['0.0%/1.0M (auto)', '↑5 ↓1 0.0%/1.0M', '?/200k (auto)', '3.1%/2M', '0.4%/9.5k', '0.0%/512']) {
      expect(piGauge.of[1].re.test(gauge), gauge).toBe(true);
    }
    for (const prose of ['12%/k', 'rate 50%/3x', '0.0%/1.0G']) expect(piGauge.of[1].re.test(prose), prose).toBe(false);

    // Gemini's composer row in either colour mode; a reply's indented quote is not it.
    const geminiComposer = byName('gemini').rules[3]?.match;
    if (geminiComposer?.kind !== 'line_regex') throw new Error('gemini r3 shape');
    expect(geminiComposer.re.test(' >   Type your message or @path/to/file')).toBe(true);
    expect(geminiComposer.re.test(' > half typed draft')).toBe(true);
    // Shell mode (`!` typed at the composer) draws ` ! ` in its place.
    expect(geminiComposer.re.test(' !   Type your shell command')).toBe(true);
    expect(geminiComposer.re.test(' ! sleep 3')).toBe(true);
    expect(geminiComposer.re.test('   ! an indented line of output')).toBe(false);
    expect(geminiComposer.re.test('   > a quoted line of a reply')).toBe(false);
    expect(geminiComposer.re.test('> no leading space')).toBe(false);
  });
});

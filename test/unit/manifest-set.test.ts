// Merging bundled and user manifests, config overrides, and the file layer around them.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { applyAgentConfig } from '../../collector/core/agent-config.js';
import { ManifestError, loadManifestSet } from '../../collector/core/manifest-load.js';
import type { ManifestFile } from '../../collector/core/types.js';
import {
  bundledActionDir,
  bundledManifestDir,
  loadActions,
  loadAgentManifests,
  readManifestFiles,
  userActionDir,
  userManifestDir,
} from '../../collector/manifest-files.js';

function manifest(path: string, proc: string, extra = ''): ManifestFile {
  return {
    path,
    text: `min_engine_version = "0.4.0"\n[identity]\nprocess_names = ["${proc}"]\n[capture]\n${extra}`,
  };
}

const B = (name: string) => manifest(`/bundled/${name}.toml`, name);
const BUNDLED = ['pi', 'cursor', 'gemini', 'codex', 'opencode', 'claude'].map(B); // deliberately scrambled

describe('loadManifestSet', () => {
  it('orders bundled manifests claude, opencode, codex, gemini, cursor, pi whatever the input order', () => {
    const set = loadManifestSet(BUNDLED, []);
    expect(set.manifests.map((m) => m.name)).toEqual(['claude', 'opencode', 'codex', 'gemini', 'cursor', 'pi']);
    expect(set.issues).toEqual([]);
  });

  it('a user file shadows the bundled one in its slot; new names are appended by file name', () => {
    const user = [manifest('/u/zeta.toml', 'zeta'), manifest('/u/codex.toml', 'my-codex'), manifest('/u/alpha.toml', 'alpha')];
    const set = loadManifestSet(BUNDLED, user);
    expect(set.manifests.map((m) => m.name)).toEqual(['claude', 'opencode', 'codex', 'gemini', 'cursor', 'pi', 'alpha', 'zeta']);
    const codex = set.manifests[2];
    expect(codex?.identity.processNames).toEqual(['my-codex']);
    expect(codex?.bundled).toBe(false);
    expect(codex?.path).toBe('/u/codex.toml');
    expect(set.manifests[0]?.bundled).toBe(true);
  });

  it('sorts user files by whole file name', () => {
    const set = loadManifestSet([], [manifest('/u/a.toml', 'a'), manifest('/u/a-b.toml', 'ab')]);
    // '-' sorts before '.', so a-b.toml comes first.
    expect(set.manifests.map((m) => m.name)).toEqual(['a-b', 'a']);
  });

  it('loads a user manifest whose rules read tail_lines( 5 ) and tail_lines(0) instead of dropping it', () => {
    const rules =
      '[[rules]]\nstate = "idle"\nregion = "tail_lines( 5 )"\nmatch = { contains = "> " }\n' +
      '[[rules]]\nstate = "working"\nregion = "tail_lines(0)"\nmatch = { contains = "x" }\n';
    const set = loadManifestSet([], [manifest('/u/aider.toml', 'aider', rules)]);
    expect(set.issues).toEqual([]);
    expect(set.manifests[0]?.rules.map((r) => r.region)).toEqual([
      { kind: 'tail_lines', n: 5 },
      { kind: 'tail_lines', n: 0 },
    ]);
  });

  it('reports a user manifest without process_names instead of loading one that can never match', () => {
    const none = { path: '/u/aider.toml', text: 'min_engine_version = "0.4.0"\n[identity]\ntitle_patterns = ["^aider"]\n[capture]\n' };
    const set = loadManifestSet([], [none]);
    expect(set.manifests).toEqual([]);
    expect(set.issues).toHaveLength(1);
    expect(set.issues[0]?.problem).toMatch(/^identity\.process_names: missing required key/);
  });

  it('skips a bad user file and reports it, keeping the bundled one it would have shadowed', () => {
    const bad = { path: '/u/claude.toml', text: 'min_engine_version = "0.4.0"\n[identity]\nproces_names = []\n[capture]\n' };
    const set = loadManifestSet(BUNDLED, [bad, manifest('/u/extra.toml', 'extra')]);
    expect(set.manifests.map((m) => m.name)).toEqual(['claude', 'opencode', 'codex', 'gemini', 'cursor', 'pi', 'extra']);
    expect(set.manifests[0]?.bundled).toBe(true);
    expect(set.issues).toEqual([{ file: '/u/claude.toml', problem: 'identity.proces_names: unknown key' }]);
  });

  it('a too-new user file is skipped with the upgrade message', () => {
    const set = loadManifestSet([], [{ path: '/u/new.toml', text: 'min_engine_version = "1.0"\n' }]);
    expect(set.manifests).toEqual([]);
    expect(set.issues[0]?.problem).toMatch(/requires engine 1\.0, this is 0\.4\.4: upgrade/);
  });

  it('a bad bundled file throws', () => {
    expect(() => loadManifestSet([...BUNDLED, { path: '/bundled/x.toml', text: 'nope =' }], [])).toThrow(ManifestError);
  });
});

describe('applyAgentConfig', () => {
  const set = loadManifestSet(BUNDLED, []);

  it('enabled = false drops the agent; enabled = true keeps it', () => {
    const out = applyAgentConfig(set, [
      { name: 'codex', enabled: false },
      { name: 'pi', enabled: true },
    ]);
    expect(out.manifests.map((m) => m.name)).toEqual(['claude', 'opencode', 'gemini', 'cursor', 'pi']);
  });

  it('process_names appends without duplicates and without touching the input', () => {
    const out = applyAgentConfig(set, [{ name: 'claude', process_names: ['claude', 'claude-dev'] }]);
    expect(out.manifests[0]?.identity.processNames).toEqual(['claude', 'claude-dev']);
    expect(set.manifests[0]?.identity.processNames).toEqual(['claude']);
  });

  it('ignores entries for agents that are not loaded and keeps issues', () => {
    const withIssue = { ...set, issues: [{ file: '/u/x.toml', problem: 'p' }] };
    const out = applyAgentConfig(withIssue, [{ name: 'nobody', enabled: false }]);
    expect(out.manifests.map((m) => m.name)).toEqual(set.manifests.map((m) => m.name));
    expect(out.issues).toEqual(withIssue.issues);
  });
});

describe('manifest files', () => {
  const root = mkdtempSync(join(tmpdir(), 'tma-manifests-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('finds the bundled directories from the module location', () => {
    expect(bundledManifestDir()).toMatch(/manifests[/\\]agents$/);
    expect(bundledActionDir()).toMatch(/manifests[/\\]actions$/);
    expect(readManifestFiles(bundledManifestDir()).map((f) => f.path.replace(/.*[/\\]/, ''))).toEqual([
      'claude.toml',
      'codex.toml',
      'cursor.toml',
      'gemini.toml',
      'opencode.toml',
      'pi.toml',
    ]);
  });

  it('user dirs follow XDG_CONFIG_HOME, else HOME/.config', () => {
    expect(userManifestDir({ XDG_CONFIG_HOME: '/cfg', HOME: '/home/u' })).toBe('/cfg/tma/agents');
    expect(userActionDir({ XDG_CONFIG_HOME: '/cfg', HOME: '/home/u' })).toBe('/cfg/tma/actions');
    expect(userManifestDir({ HOME: '/home/u' })).toBe('/home/u/.config/tma/agents');
    expect(userManifestDir({ XDG_CONFIG_HOME: '', HOME: '/home/u' })).toBe('/home/u/.config/tma/agents');
    expect(userManifestDir({ XDG_CONFIG_HOME: 'relative', HOME: '/home/u' })).toBe('/home/u/.config/tma/agents');
  });

  it('reads only *.toml files, sorted; a missing dir is empty', () => {
    const dir = join(root, 'read');
    mkdirSync(dir);
    writeFileSync(join(dir, 'b.toml'), 'B');
    writeFileSync(join(dir, 'a.toml'), 'A');
    writeFileSync(join(dir, 'c.txt'), 'C');
    writeFileSync(join(dir, 'd.toml.bak'), 'D');
    mkdirSync(join(dir, 'sub.toml'));
    expect(readManifestFiles(dir)).toEqual([
      { path: join(dir, 'a.toml'), text: 'A' },
      { path: join(dir, 'b.toml'), text: 'B' },
    ]);
    expect(readManifestFiles(join(root, 'missing'))).toEqual([]);
  });

  it('loads bundled plus the user directory', () => {
    const cfg = join(root, 'cfg');
    mkdirSync(join(cfg, 'tma', 'agents'), { recursive: true });
    const f = manifest('', 'mine');
    writeFileSync(join(cfg, 'tma', 'agents', 'mine.toml'), f.text);
    writeFileSync(join(cfg, 'tma', 'agents', 'broken.toml'), 'x = ');
    const set = loadAgentManifests({ env: { XDG_CONFIG_HOME: cfg } });
    expect(set.manifests.map((m) => m.name)).toEqual(['claude', 'opencode', 'codex', 'gemini', 'cursor', 'pi', 'mine']);
    expect(set.issues.map((i) => i.file)).toEqual([join(cfg, 'tma', 'agents', 'broken.toml')]);
  });

  it('an explicit manifest dir is a closed set', () => {
    const dir = join(root, 'closed');
    mkdirSync(dir);
    writeFileSync(join(dir, 'only.toml'), manifest('', 'only').text);
    const set = loadAgentManifests({ manifestDir: dir, env: { XDG_CONFIG_HOME: join(root, 'cfg') } });
    expect(set.manifests.map((m) => m.name)).toEqual(['only']);
    expect(set.issues).toEqual([]);
  });

  it('loads actions: bundled alone, and failing whole on a broken user file', () => {
    const clean = loadActions({ env: { XDG_CONFIG_HOME: join(root, 'no-such-cfg') } });
    expect(clean.ok && clean.actions.map((a) => a.name)).toEqual(['approve', 'deny', 'interrupt', 'compact']);
    const cfg = join(root, 'actcfg');
    mkdirSync(join(cfg, 'tma', 'actions'), { recursive: true });
    writeFileSync(join(cfg, 'tma', 'actions', 'bad.toml'), 'x = ');
    const broken = loadActions({ env: { XDG_CONFIG_HOME: cfg } });
    expect(broken.ok).toBe(false);
    expect(!broken.ok && broken.issues.map((i) => i.file)).toEqual([join(cfg, 'tma', 'actions', 'bad.toml')]);
  });
});

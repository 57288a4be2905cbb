import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { evaluate } from '../../collector/core/rules.js';
import { loadAgentManifestsCached, reviveSet, serializeSet } from '../../collector/manifest-cache.js';
import { loadAgentManifests } from '../../collector/manifest-files.js';

const root = mkdtempSync(join(tmpdir(), 'tma-mcache-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('the validated-manifest cache', () => {
  it('a revived set equals the validated one, regexes included', () => {
    const set = loadAgentManifests({ env: { XDG_CONFIG_HOME: join(root, 'none') } });
    const back = reviveSet(serializeSet(set));
    expect(back).toEqual(set);
    const claude = back.manifests.find((m) => m.name === 'claude')!;
    const snap = { title: '⠂ Working', tail: '', visibleHeight: null, scrollPosition: null, capturedAt: 1 };
    expect(evaluate(claude, snap).evidence.map((e) => e.claim)).toEqual([{ kind: 'state', state: 'working', detail: null }]);
  });

  it('serves the same set from disk on the second call, and validates again when a file changes', async () => {
    const cfg = join(root, 'cfg');
    const env = { XDG_CONFIG_HOME: cfg, XDG_CACHE_HOME: join(root, 'cache') };
    const first = await loadAgentManifestsCached({ env });
    expect(readdirSync(join(root, 'cache', 'tma'))).toHaveLength(1);
    const second = await loadAgentManifestsCached({ env });
    expect(second).toEqual(first);

    // A user manifest appears: a different key, the new agent is there, the old entry is gone.
    mkdirSync(join(cfg, 'tma', 'agents'), { recursive: true });
    writeFileSync(join(cfg, 'tma', 'agents', 'aider.toml'), 'min_engine_version = "0.4.0"\n[identity]\nprocess_names = ["aider"]\n[capture]\nvisible = []\n');
    const third = await loadAgentManifestsCached({ env });
    expect(third.manifests.map((m) => m.name)).toContain('aider');
    expect(readdirSync(join(root, 'cache', 'tma'))).toHaveLength(1);

    // A broken user file is reported, from the cache too.
    writeFileSync(join(cfg, 'tma', 'agents', 'bad.toml'), 'min_engine_version = "0.4.0"\n[identity]\nprocess_name = []\n');
    for (let i = 0; i < 2; i++) {
      const s = await loadAgentManifestsCached({ env });
      expect(s.issues).toHaveLength(1);
      expect(s.issues[0]!.problem).toMatch(/process_name/);
    }
  });
});

import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../collector/config/config-schema.js';
import { loadConfig } from '../../collector/config/load-config.js';

const root = mkdtempSync(join(tmpdir(), 'tma-ccache-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const FULL =
  '[fold]\nfreshness_secs = 5\n[[agent]]\nname = "pi"\nenabled = false\n[remote]\nallow_actions = ["approve"]\n' +
  '[notify]\non = ["blocked", "done"]\nbell = true\n[notify.context_high]\nthreshold = 80\n' +
  '[status]\nblocked = { glyph = "B", color = "colour196" }\n';

describe('the validated-config cache', () => {
  const path = join(root, 'config.toml');
  const env = { XDG_CACHE_HOME: join(root, 'cache'), HOME: root };
  const entries = () => readdirSync(join(root, 'cache', 'tma')).filter((n) => n.startsWith('config-'));

  it('serves what validation gave, from one entry, and validates again when the file changes', async () => {
    writeFileSync(path, FULL);
    const first = await loadConfig(path, env);
    expect(first).toEqual(parseConfig(path, FULL));
    expect(entries()).toHaveLength(1);
    const second = await loadConfig(path, env);
    expect(second).toEqual(first);

    // The cached entry is what is served: altering it shows through (so the hit path is real).
    writeFileSync(join(root, 'cache', 'tma', entries()[0]!), JSON.stringify({ ...first, tmuxBin: '/from/the/cache' }));
    expect((await loadConfig(path, env)).tmuxBin).toBe('/from/the/cache');

    writeFileSync(path, `${FULL}[fold]\n`);
    await expect(loadConfig(path, env)).rejects.toThrow(/not valid TOML/);
    writeFileSync(path, '[status]\nidle = { glyph = "I" }\n');
    expect((await loadConfig(path, env)).status).toEqual({ idle: { glyph: 'I' } });
    expect(entries()).toHaveLength(1);
  });

  it('never caches a file that does not validate: its error is told every time', async () => {
    writeFileSync(path, 'colour = 1\n');
    for (let i = 0; i < 2; i++) await expect(loadConfig(path, env)).rejects.toThrow(/colour: unknown key/);
  });

  it('a torn entry is validated over', async () => {
    writeFileSync(path, FULL);
    await loadConfig(path, env);
    writeFileSync(join(root, 'cache', 'tma', entries()[0]!), '{"fold":');
    expect(await loadConfig(path, env)).toEqual(parseConfig(path, FULL));
  });
});

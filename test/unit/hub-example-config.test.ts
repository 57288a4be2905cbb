// deploy/hub.example.toml is what people copy: it must load as it stands, and with its commented
// examples switched on, and it must document every [[notify]] key the hub accepts.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseHubConfig } from '../../hub/config/config.js';
import { notifyEntry } from '../../hub/notify/sink-config.js';

const text = readFileSync(join(import.meta.dirname, '../../deploy/hub.example.toml'), 'utf8');
const anyFile = (p: string) => `tok-${p.length}-${p.split('/').pop()}`;
/** The commented settings and tables (`# key = …`, `# [[table]]`) switched on; prose stays a comment. */
const switchedOn = text.replace(/^# (?=\[\[?[a-z]+\]\]?$|[a-z_]+ = )/gm, '');

describe('deploy/hub.example.toml', () => {
  it('loads as it stands', () => {
    expect(parseHubConfig('/etc/tma/hub.toml', text, anyFile).clients.map((c) => c.name)).toEqual(['alice', 'wallboard']);
  });

  it('loads with every example switched on: an ntfy, a webhook and a command sink, public_url, [metrics]', () => {
    const c = parseHubConfig('/etc/tma/hub.toml', switchedOn, anyFile);
    expect(c.notify?.map((s) => [s.name, s.kind])).toEqual([
      ['phone', 'ntfy'],
      ['ops', 'webhook'],
      ['log', 'command'],
    ]);
    expect(c.publicUrl).toBe('https://fleet.example.lan');
    expect(c.metrics).toEqual({ perPane: true });
    expect(c.ssh.map((s) => s.name)).toEqual(['gpu1']);
  });

  it('names every [[notify]] key in its key list', () => {
    for (const key of notifyEntry.keyof().options) expect(text).toMatch(new RegExp(`^#   ${key} `, 'm'));
  });
});

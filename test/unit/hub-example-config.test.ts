// deploy/hub.example.toml is what people copy: it must load as it stands, and with its commented
// examples switched on, and it must document every [[notify]] key the hub accepts.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mintCertificate } from '../../cli/verbs/hub-tls.js';
import { parseHubConfig } from '../../hub/config/config.js';
import { notifyEntry } from '../../hub/notify/sink-config.js';

const text = readFileSync(join(import.meta.dirname, '../../deploy/hub.example.toml'), 'utf8');
const scratch = mkdtempSync(join(tmpdir(), 'tma-example-'));
const pem = mintCertificate(['fleet.example.lan'], join(scratch, 'mint'));
rmSync(scratch, { recursive: true, force: true });
/** A token for every token file; the [tls] example's files get a pair that loads. */
const anyFile = (p: string) => (p.endsWith('.crt') ? pem.cert : p.endsWith('.key') ? pem.key : `tok-${p.length}-${p.split('/').pop()}`);
/** The commented settings and tables (`# key = …`, `# [[table]]`) switched on; prose stays a comment. */
const switchedOn = text.replace(/^# (?=\[\[?[a-z]+\]\]?$|[a-z_]+ = )/gm, '');

describe('deploy/hub.example.toml', () => {
  it('loads as it stands', () => {
    expect(parseHubConfig('/etc/tma/hub.toml', text, anyFile).clients.map((c) => c.name)).toEqual(['alice', 'wallboard']);
  });

  it('loads with every example switched on: an ntfy, a webhook and a command sink, public_url, [metrics], [tls]', () => {
    const c = parseHubConfig('/etc/tma/hub.toml', switchedOn, anyFile);
    expect(c.notify?.map((s) => [s.name, s.kind])).toEqual([
      ['phone', 'ntfy'],
      ['ops', 'webhook'],
      ['log', 'command'],
    ]);
    expect(c.publicUrl).toBe('https://fleet.example.lan');
    expect(c.metrics).toEqual({ perPane: true });
    expect(c.tls).toMatchObject({ certFile: '/etc/tma/tls/hub.crt', keyFile: '/etc/tma/tls/hub.key' });
    expect(c.clients.map((x) => x.expiresAt ?? null)).toEqual([null, Date.parse('2030-01-01T00:00:00Z')]);
    expect(c.ssh.map((s) => s.name)).toEqual(['gpu1']);
  });

  it('names every [[notify]] key in its key list', () => {
    for (const key of notifyEntry.keyof().options) expect(text).toMatch(new RegExp(`^#   ${key} `, 'm'));
  });
});

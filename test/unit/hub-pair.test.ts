// `tma hub pair`, `clients` and `revoke` in parts: the --ttl it takes, the address it prints for a
// phone, a client entry taken out of a hand-edited hub.toml with the rest kept byte for byte, and
// the hub's last-seen record behind `tma hub clients`.

import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ExitError } from '../../cli/local.js';
import { removeClientEntry } from '../../cli/verbs/hub-config-file.js';
import { pageBase, pairEntryText, parseTtl } from '../../cli/verbs/hub-pair.js';
import { parseHubConfig } from '../../hub/config/config.js';
import { ClientsSeen, readClientsSeen } from '../../hub/http/clients-seen.js';

const scratch = mkdtempSync(join(tmpdir(), 'tma-pair-unit-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const cfg = (text: string) => parseHubConfig('/h/hub.toml', text, () => 'tok');

describe('tma hub pair', () => {
  it('--ttl takes s, m, h and d', () => {
    expect([parseTtl('90s'), parseTtl('10m'), parseTtl('2h'), parseTtl('7d')]).toEqual([90_000, 600_000, 7_200_000, 604_800_000]);
    for (const bad of ['', '0m', '10', '1.5h', '10 m', '-1m', '1w']) expect(() => parseTtl(bad)).toThrow(/--ttl/);
  });

  it('the link is at public_url, else where the hub listens; loopback and plain HTTP are said', () => {
    expect(pageBase(cfg('public_url = "https://fleet.lan/tma"\n'), 'http://127.0.0.1:7480')).toEqual({ base: 'https://fleet.lan/tma', warning: null });
    const loop = pageBase(cfg(''), 'http://127.0.0.1:7480');
    expect(loop.base).toBe('http://127.0.0.1:7480');
    expect(loop.warning).toMatch(/^the hub listens on 127\.0\.0\.1:7480, loopback only: a phone cannot open this link; set public_url/);
    expect(pageBase(cfg('listen = "192.168.1.9:7000"\n'), null)).toEqual({
      base: 'http://192.168.1.9:7000',
      warning: 'the link is plain HTTP: the token travels in clear and browsers give no notifications; tma hub tls adds HTTPS',
    });
    expect(pageBase(null, 'https://10.0.0.5:7480')).toEqual({ base: 'https://10.0.0.5:7480', warning: null });
    // Every address: this machine's LAN address when it has one, never 0.0.0.0.
    expect(pageBase(null, 'http://0.0.0.0:7480').base).not.toContain('0.0.0.0');
  });

  it('the entry it adds reads back with its expiry', () => {
    const text = pairEntryText('phone', 'viewer', '/h/tokens/phone', Date.parse('2026-12-02T02:10:00.250Z'), '# added');
    expect(text).toContain('expires = 2026-12-02T02:10:01Z\n');
    expect(cfg(text).clients).toEqual([{ name: 'phone', token: 'tok', role: 'viewer', expiresAt: Date.parse('2026-12-02T02:10:01Z') }]);
  });
});

describe('tma hub revoke', () => {
  const HAND = [
    '# my hub',
    'listen = "0.0.0.0:7480"   # every address',
    '',
    '[[client]]',
    'name = "local"',
    'token_file = "hub.token"',
    'role = "operator"',
    '',
    '# device phone paired (viewer) by tma hub pair',
    '# added to hub.toml',
    '[[client]]',
    'name = "phone"',
    'token_file = "tokens/phone"',
    "role = 'viewer'",
    'expires = 2026-12-02T02:10:01Z',
    '',
    '  # the build box',
    '[[collector]]',
    'host    = "b1"',
    'token = "t-b1"',
    '',
  ].join('\n');

  it('takes out the one entry and its comments; every other byte stays', () => {
    const out = removeClientEntry('/h/hub.toml', HAND, 'phone');
    expect(out).toBe(HAND.replace(/# device phone[^]*?expires = [^\n]+\n\n/, ''));
    expect(cfg(out).clients.map((c) => c.name)).toEqual(['local']);
    expect(cfg(out).collectors.map((c) => c.host)).toEqual(['b1']);
    const last = removeClientEntry('/h/hub.toml', out, 'local');
    expect(last).toBe('# my hub\nlisten = "0.0.0.0:7480"   # every address\n\n  # the build box\n[[collector]]\nhost    = "b1"\ntoken = "t-b1"\n');
  });

  it('an entry it cannot take out on its own is left for a person, and the file is not touched', () => {
    const inline = 'client = [{ name = "phone", token = "t", role = "viewer" }]\n';
    expect(() => removeClientEntry('/h/hub.toml', inline, 'phone')).toThrow(ExitError);
    expect(() => removeClientEntry('/h/hub.toml', HAND, 'tablet')).toThrow('could not take client tablet out of /h/hub.toml on its own');
  });
});

describe('the last-seen record', () => {
  it('requests touch memory; the file is written on the interval and at close, with open streams counted', async () => {
    const file = join(scratch, 'state', 'hub-clients.json');
    let now = 1000;
    let open: string[] = [];
    const seen = new ClientsSeen({ file, clock: () => now, open: () => open, intervalMs: 20 });
    seen.touch('phone');
    expect(existsSync(file)).toBe(false);
    await new Promise((r) => setTimeout(r, 60));
    expect(readClientsSeen(file)).toEqual({ phone: 1000 });
    now = 5000;
    open = ['tablet'];
    seen.close();
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ schema: 1, clients: { phone: 1000, tablet: 5000 } });
    // A restart starts from what was recorded.
    const again = new ClientsSeen({ file, clock: () => now, open: () => [] });
    expect(again.get('phone')).toBe(1000);
    again.close();
  });

  it('a file that does not parse reads as nothing seen', () => {
    const file = join(scratch, 'bad.json');
    writeFileSync(file, '{"schema":1,"clients":{"a":"x","b":7}');
    expect(readClientsSeen(file)).toEqual({});
    writeFileSync(file, '{"schema":1,"clients":{"a":"x","b":7}}');
    expect(readClientsSeen(file)).toEqual({ b: 7 });
  });
});

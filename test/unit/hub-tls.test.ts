// The hub's own TLS, in parts: the trust flags a collector or the fleet CLI is given, the one-line
// reason for a certificate it refuses, `[tls]` in hub.toml (a pair that does not load stops the
// hub), what a reload does with a renewed certificate, the certificate `tma hub tls` mints, and
// client tokens that expire (`tma hub pair --ttl`).

import { createPrivateKey, X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { parseArgv, type Parsed } from '../../cli/args.js';
import { hubTrustOf } from '../../cli/hub-trust.js';
import { VERB_FLAGS } from '../../cli/verb-table.js';
import { mintCertificate, subjectAltNames } from '../../cli/verbs/hub-tls.js';
import { HubConfigError, parseHubConfig, type HubConfig } from '../../hub/config/config.js';
import { diffHubConfig } from '../../hub/config/diff.js';
import { applyReload, type ReloadTarget } from '../../hub/config/reload.js';
import { authClient, TokenBook } from '../../hub/http/auth.js';
import { certificateProblem, checkTrust, parseFingerprint } from '../../shared/hub-tls.js';

const scratch = mkdtempSync(join(tmpdir(), 'tma-tls-unit-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const a = mintCertificate(['localhost', '127.0.0.1'], join(scratch, 'a'));
const b = mintCertificate(['hub.lan', '10.0.0.5', '::1'], join(scratch, 'b'));

const files =
  (pem: { cert: string; key: string }, key = pem.key) =>
  (p: string) => {
    if (p.endsWith('.crt')) return pem.cert;
    if (p.endsWith('.key')) return key;
    throw Object.assign(new Error('no such file'), { code: 'ENOENT' });
  };
const TLS = '[tls]\ncert_file = "tls/hub.crt"\nkey_file = "tls/hub.key"\n';
const parse = (text: string, read: (p: string) => string) => parseHubConfig('/etc/tma/hub.toml', text, read);

describe('the trust flags', () => {
  it('a fingerprint in any usual spelling reads as Node prints it', () => {
    const fp = new X509Certificate(a.cert).fingerprint256;
    for (const spelt of [fp, fp.toLowerCase(), fp.replace(/:/g, ''), `sha256:${fp}`, `SHA-256=${fp.replace(/:/g, ' ')}`]) {
      expect(parseFingerprint(spelt)).toBe(fp);
    }
    for (const bad of ['', 'AB', fp.slice(3), `${fp}:00`, 'zz'.repeat(32)]) expect(() => parseFingerprint(bad)).toThrow(/64 hex digits/);
  });

  it('one of --hub-ca and --hub-fingerprint; the CA file must be a PEM certificate', () => {
    expect(() => checkTrust({ caFile: '/x', fingerprint: 'AB' })).toThrow('give --hub-ca or --hub-fingerprint, not both');
    expect(() => checkTrust({ caFile: join(scratch, 'none.pem') })).toThrow(/^cannot read --hub-ca .*none\.pem: ENOENT$/);
    expect(checkTrust({})).toEqual({});
  });

  it('a certificate refusal is one line naming the problem and the flags; other errors are not', () => {
    const selfSigned = Object.assign(new Error('self-signed certificate'), { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' });
    const hint = "; pass --hub-ca FILE (the hub's certificate, e.g. from tma hub tls) or --hub-fingerprint SHA256";
    expect(certificateProblem(selfSigned)).toBe(`self-signed certificate${hint}`);
    // fetch wraps it: TypeError('fetch failed', { cause })
    expect(certificateProblem(new TypeError('fetch failed', { cause: selfSigned }))).toBe(`self-signed certificate${hint}`);
    const altName = Object.assign(new Error("Hostname/IP does not match certificate's altnames: IP: 10.1.1.1 is not in the cert's list: 127.0.0.1"), {
      code: 'ERR_TLS_CERT_ALTNAME_INVALID',
    });
    expect(certificateProblem(altName)).toMatch(/^Hostname\/IP does not match .*; pass --hub-ca FILE/);
    expect(certificateProblem(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))).toBeNull();
  });
});

describe('the trust a verb dials with', () => {
  const parsed = (argv: string[]) => parseArgv(argv, VERB_FLAGS) as unknown as Parsed;

  it('reads the CA file at every dial, so a renewed certificate copied over it is trusted next time', async () => {
    const file = join(scratch, 'hub-ca.pem');
    writeFileSync(file, a.cert);
    const dial = hubTrustOf(parsed(['--hub-ca', file, 'ls']), new URL('wss://hub.lan:7480'))!;
    expect(await dial()).toEqual({ ca: a.cert });
    writeFileSync(file, b.cert);
    expect(await dial()).toEqual({ ca: b.cert });
  });

  it('none without the flags; a flag for a plain hub, or a bad one, is said before anything dials', () => {
    expect(hubTrustOf(parsed(['ls']), new URL('ws://hub.lan:7480'))).toBeNull();
    expect(() => hubTrustOf(parsed(['--hub-ca', '/x.pem', 'ls']), new URL('ws://hub.lan:7480'))).toThrow(
      '--hub-ca is for a hub with TLS: --hub wss://hub.lan:7480',
    );
    expect(() => hubTrustOf(parsed(['--hub-fingerprint', 'AB', 'ls']), new URL('https://hub.lan:7480'))).toThrow(/64 hex digits/);
  });

  it('TMA_HUB_CA / TMA_HUB_FINGERPRINT stand in for absent flags; a flag replaces both; a plain hub ignores them', async () => {
    const file = join(scratch, 'env-ca.pem');
    writeFileSync(file, a.cert);
    const tlsHub = new URL('https://hub.lan:7480');
    expect(await hubTrustOf(parsed(['ls']), tlsHub, { TMA_HUB_CA: file })!()).toEqual({ ca: a.cert });
    expect(hubTrustOf(parsed(['ls']), new URL('http://hub.lan:7480'), { TMA_HUB_CA: file })).toBeNull();
    // The exported pin is bad, but the flag given for this command is what counts.
    expect(await hubTrustOf(parsed(['--hub-ca', file, 'ls']), tlsHub, { TMA_HUB_FINGERPRINT: 'AB' })!()).toEqual({ ca: a.cert });
    expect(() => hubTrustOf(parsed(['ls']), tlsHub, { TMA_HUB_FINGERPRINT: 'AB' })).toThrow(/^TMA_HUB_FINGERPRINT "AB": expected/);
  });
});

describe('[tls] in hub.toml', () => {
  it('reads the pair, resolved against the config folder', () => {
    const c = parse(TLS, files(a));
    expect(c.tls).toEqual({ certFile: '/etc/tma/tls/hub.crt', keyFile: '/etc/tma/tls/hub.key', cert: a.cert, key: a.key });
    expect(parse('', files(a)).tls).toBeUndefined();
  });

  it('a key that is not the certificate’s, a missing file, a stray key: the hub does not start', () => {
    expect(() => parse(TLS, files(a, b.key))).toThrow(HubConfigError);
    expect(() => parse(TLS, files(a, b.key))).toThrow(
      /^\/etc\/tma\/hub\.toml: tls: \/etc\/tma\/tls\/hub\.crt and \/etc\/tma\/tls\/hub\.key do not load as a certificate and its key: /,
    );
    expect(() => parse(TLS.replace('tls/hub.key', 'tls/gone.pem'), files(a))).toThrow('tls.key_file: cannot read /etc/tma/tls/gone.pem: ENOENT');
    expect(() => parse(TLS, files({ cert: 'not pem', key: a.key }))).toThrow('tls.cert_file: /etc/tma/tls/hub.crt is not a PEM file');
    expect(() => parse(`${TLS}ca_file = "x"\n`, files(a))).toThrow('tls.ca_file: unknown key');
  });

  it('a renewed pair is applied live; turning TLS on or off waits for a restart', async () => {
    const on = parse(TLS, files(a));
    const renewed = parse(TLS, files(b));
    const off = parse('', files(a));
    expect(diffHubConfig(on, renewed)).toMatchObject({ liveChanged: ['tls'], needsRestart: [] });
    expect(diffHubConfig(on, parse(TLS, files(a)))).toMatchObject({ liveChanged: [], needsRestart: [] });
    expect(diffHubConfig(off, on).needsRestart).toEqual(['tls']);
    expect(diffHubConfig(on, off).needsRestart).toEqual(['tls']);

    let current: HubConfig = on;
    const set: string[] = [];
    const target: ReloadTarget = {
      logger: pino({ level: 'silent' }),
      current: () => current,
      commit: (c) => (current = c),
      setCredentials: () => undefined,
      closeClientStreams: () => 0,
      closeHostLinks: () => 0,
      declareHost: () => undefined,
      dialSsh: () => undefined,
      stopSsh: async () => undefined,
      setSinks: () => undefined,
      setCertificate: (t) => void set.push(t.cert),
    };
    expect((await applyReload(target, renewed)).summary).toBe('reload: tls changed');
    expect(set).toEqual([b.cert]);
    await applyReload(target, renewed);
    expect(set).toHaveLength(1);
  });
});

describe('tma hub tls', () => {
  it('mints a self-signed P-256 certificate for every name and address given', () => {
    const x = new X509Certificate(b.cert);
    expect(x.subjectAltName).toBe('DNS:hub.lan, IP Address:10.0.0.5, IP Address:0:0:0:0:0:0:0:1');
    expect(x.checkIssued(x)).toBe(true);
    expect(x.ca).toBe(true);
    expect(x.publicKey.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    expect(x.checkPrivateKey(createPrivateKey(b.key))).toBe(true);
    expect(Date.parse(x.validTo) - Date.now()).toBeGreaterThan(800 * 86_400_000);
  });

  it('refuses a name that is neither a DNS name nor an address', () => {
    expect(subjectAltNames(['a.b', '[::1]', '*.lan'])).toBe('DNS:a.b,IP:::1,DNS:*.lan');
    for (const bad of ['a b', 'x,y', 'under_score.lan', '-lead', '']) expect(() => subjectAltNames([bad])).toThrow(/a DNS name or an IP address/);
  });
});

describe('client tokens that expire', () => {
  const cfg = (expires: string) => parse(`[[client]]\nname = "phone"\ntoken = "t-phone"\nrole = "viewer"\nexpires = ${expires}\n`, files(a));

  it('expires is a TOML date-time, kept as epoch ms', () => {
    expect(cfg('2026-12-02T02:10:00Z').clients[0]).toEqual({ name: 'phone', token: 't-phone', role: 'viewer', expiresAt: Date.parse('2026-12-02T02:10:00Z') });
    expect(() => cfg('"tomorrow"')).toThrow(/client\[0\]\.expires: /);
  });

  it('the hub takes the token until then and refuses it as expired from then on', () => {
    let now = Date.parse('2026-12-02T02:09:59Z');
    const book = new TokenBook(cfg('2026-12-02T02:10:00Z'), () => now);
    expect(authClient(book, 'Bearer t-phone')).toEqual({ ok: true, who: { kind: 'client', name: 'phone', role: 'viewer' } });
    expect(book.expiredClients()).toEqual([]);
    now += 1000;
    expect(authClient(book, 'Bearer t-phone')).toEqual({ ok: false, status: 401, reason: 'expired' });
    expect(book.expiredClients()).toEqual(['phone']);
    expect(authClient(book, 'Bearer t-other')).toEqual({ ok: false, status: 401, reason: 'unknown' });
  });
});

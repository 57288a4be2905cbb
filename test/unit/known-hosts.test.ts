import { describe, expect, it } from 'vitest';
import {
  checkHostKey,
  entryMatchesHost,
  fingerprint,
  hostKeyAlgorithms,
  keyTypeOfBlob,
  knownHostsName,
  knownKeyTypes,
  parseKnownHosts,
} from '../../hub/link/known-hosts.js';

// A key made with ssh-keygen for these tests, and the lines `ssh-keygen -H` hashed from
// "[127.0.0.1]:2222 …" and "build1.example …": real output, not recomputed here.
const K1 = 'AAAAC3NzaC1lZDI1NTE5AAAAIJfgjyaO/33BnGlofxTmwbS/vZls+MF1jioXVCh73LwK';
const K1_FINGERPRINT = 'SHA256:RoofJWr7HhpEzzS1Rr35cZ3bhol44xfZRF9ZhLA8jjI';
const HASHED_LOOPBACK_2222 = `|1|0zvx/r9VZeSmijgtgL6Hru+WisI=|yLoUEDynxGkWeCjYnzwGtHV2YiM= ssh-ed25519 ${K1}`;
const HASHED_BUILD1 = `|1|HkfrK3fICIFiBoc02CaZoLUAKd0=|a2aKs9XJYO9TwWcuSlJH40llcfg= ssh-ed25519 ${K1}`;

/** A syntactically valid ed25519 blob whose key bytes are all `fill`. */
function blob(fill: number, type = 'ssh-ed25519'): Buffer {
  const t = Buffer.from(type, 'latin1');
  const k = Buffer.alloc(32, fill);
  const out = Buffer.alloc(8 + t.length + k.length);
  out.writeUInt32BE(t.length, 0);
  t.copy(out, 4);
  out.writeUInt32BE(k.length, 4 + t.length);
  k.copy(out, 8 + t.length);
  return out;
}
const b64 = (b: Buffer) => b.toString('base64');
const k1 = Buffer.from(K1, 'base64');
const A = blob(1);
const B = blob(2);

describe('knownHostsName', () => {
  it('files port 22 under the bare host and every other port in brackets', () => {
    expect(knownHostsName('Build1.Example', 22)).toBe('build1.example');
    expect(knownHostsName('127.0.0.1', 21)).toBe('[127.0.0.1]:21');
    expect(knownHostsName('127.0.0.1', 23)).toBe('[127.0.0.1]:23');
  });
});

describe('parseKnownHosts', () => {
  it('reads markers, pattern lists, hashed names and keys; skips comments, blanks and malformed lines', () => {
    const text = [
      '# a comment',
      '',
      `a.example,b.example ssh-ed25519 ${b64(A)} some comment`,
      `@revoked * ssh-ed25519 ${b64(B)}`,
      `@cert-authority *.example ssh-ed25519 ${b64(A)}`,
      `@bogus x.example ssh-ed25519 ${b64(A)}`,
      'no-key.example ssh-ed25519',
      'bad-b64.example ssh-ed25519 !!notbase64!!',
      `|1|short|hash ssh-ed25519 ${b64(A)}`,
      HASHED_BUILD1,
    ].join('\n');
    const e = parseKnownHosts(text);
    expect(e.map((x) => x.line)).toEqual([3, 4, 5, 10]);
    expect(e[0]).toMatchObject({ marker: null, patterns: ['a.example', 'b.example'], hashed: null, keyType: 'ssh-ed25519' });
    expect(e[0]!.key.equals(A)).toBe(true);
    expect(e[1]).toMatchObject({ marker: 'revoked', patterns: ['*'] });
    expect(e[2]).toMatchObject({ marker: 'cert-authority' });
    expect(e[3]!.patterns).toBeNull();
    expect(e[3]!.hashed!.hash.length).toBe(20);
  });

  it('accepts tabs and CRLF line ends', () => {
    const e = parseKnownHosts(`a.example\tssh-ed25519\t${b64(A)}\r\n`);
    expect(e).toHaveLength(1);
    expect(e[0]!.key.equals(A)).toBe(true);
  });
});

describe('entryMatchesHost', () => {
  const one = (hosts: string) => parseKnownHosts(`${hosts} ssh-ed25519 ${b64(A)}`)[0]!;

  it('matches any name of a comma list, case-insensitively, and nothing else', () => {
    const e = one('a.example,B.Example');
    expect(entryMatchesHost(e, 'a.example')).toBe(true);
    expect(entryMatchesHost(e, 'b.example')).toBe(true);
    expect(entryMatchesHost(e, 'c.example')).toBe(false);
    expect(entryMatchesHost(e, 'a.example.org')).toBe(false);
  });

  it('keeps ports apart: a bare name is port 22 only', () => {
    const e = one('[127.0.0.1]:2222');
    expect(entryMatchesHost(e, '[127.0.0.1]:2222')).toBe(true);
    expect(entryMatchesHost(e, '[127.0.0.1]:2221')).toBe(false);
    expect(entryMatchesHost(e, '127.0.0.1')).toBe(false);
    expect(entryMatchesHost(one('127.0.0.1'), '[127.0.0.1]:2222')).toBe(false);
  });

  it('treats dots literally and supports * and ? wildcards', () => {
    expect(entryMatchesHost(one('10.0.0.1'), '10a0b0c1')).toBe(false);
    expect(entryMatchesHost(one('*.example'), 'x.example')).toBe(true);
    expect(entryMatchesHost(one('*.example'), 'example')).toBe(false);
    expect(entryMatchesHost(one('build?.example'), 'build1.example')).toBe(true);
    expect(entryMatchesHost(one('build?.example'), 'build12.example')).toBe(false);
  });

  it('lets a matching negated pattern veto the line', () => {
    const e = one('*.example,!secret.example');
    expect(entryMatchesHost(e, 'open.example')).toBe(true);
    expect(entryMatchesHost(e, 'secret.example')).toBe(false);
    expect(entryMatchesHost(one('!secret.example'), 'open.example')).toBe(false);
  });

  it('matches hashed entries written by ssh-keygen -H, and only for their name', () => {
    const [loop, build] = parseKnownHosts(`${HASHED_LOOPBACK_2222}\n${HASHED_BUILD1}`);
    expect(entryMatchesHost(loop!, '[127.0.0.1]:2222')).toBe(true);
    expect(entryMatchesHost(loop!, '[127.0.0.1]:2223')).toBe(false);
    expect(entryMatchesHost(loop!, '127.0.0.1')).toBe(false);
    expect(entryMatchesHost(build!, 'build1.example')).toBe(true);
    expect(entryMatchesHost(build!, 'build2.example')).toBe(false);
  });
});

describe('checkHostKey', () => {
  it('match when a line for the host holds the key', () => {
    const e = parseKnownHosts(`other.example ssh-ed25519 ${b64(B)}\nhost.example ssh-ed25519 ${b64(A)}`);
    expect(checkHostKey(e, 'host.example', A)).toBe('match');
  });

  it('mismatch when the host is known with other keys only', () => {
    const e = parseKnownHosts(`host.example ssh-ed25519 ${b64(B)}`);
    expect(checkHostKey(e, 'host.example', A)).toBe('mismatch');
  });

  it('unknown when no line names the host, including an empty file', () => {
    expect(checkHostKey(parseKnownHosts(`other.example ssh-ed25519 ${b64(A)}`), 'host.example', A)).toBe('unknown');
    expect(checkHostKey(parseKnownHosts(''), 'host.example', A)).toBe('unknown');
  });

  it('compares the whole key: a key differing in its last byte is a mismatch', () => {
    const near = Buffer.from(A);
    near[near.length - 1] = near[near.length - 1]! ^ 1;
    const e = parseKnownHosts(`host.example ssh-ed25519 ${b64(near)}`);
    expect(checkHostKey(e, 'host.example', A)).toBe('mismatch');
  });

  it('refuses a revoked key even where a plain line for the host holds it', () => {
    const e = parseKnownHosts(`host.example ssh-ed25519 ${b64(A)}\n@revoked other.example ssh-ed25519 ${b64(A)}`);
    expect(checkHostKey(e, 'host.example', A)).toBe('revoked');
    // Revoking one key leaves the host's other keys usable.
    const f = parseKnownHosts(`host.example ssh-ed25519 ${b64(A)}\n@revoked * ssh-ed25519 ${b64(B)}`);
    expect(checkHostKey(f, 'host.example', A)).toBe('match');
  });

  it('ignores @cert-authority lines: they neither match nor make the host known', () => {
    const e = parseKnownHosts(`@cert-authority host.example ssh-ed25519 ${b64(A)}`);
    expect(checkHostKey(e, 'host.example', A)).toBe('unknown');
  });

  it('matches the real key through a hashed line', () => {
    const e = parseKnownHosts(HASHED_LOOPBACK_2222);
    expect(checkHostKey(e, '[127.0.0.1]:2222', k1)).toBe('match');
    expect(checkHostKey(e, '[127.0.0.1]:2222', A)).toBe('mismatch');
    expect(checkHostKey(e, '[127.0.0.1]:22', k1)).toBe('unknown');
  });
});

describe('key types and algorithms', () => {
  it('lists the types on file for the host, once each, skipping other hosts and markers', () => {
    const e = parseKnownHosts(
      [
        `host.example ssh-rsa ${b64(blob(1, 'ssh-rsa'))}`,
        `host.example ssh-ed25519 ${b64(A)}`,
        `host.example ssh-ed25519 ${b64(B)}`,
        `other.example ecdsa-sha2-nistp256 ${b64(A)}`,
        `@cert-authority host.example ecdsa-sha2-nistp384 ${b64(A)}`,
      ].join('\n'),
    );
    expect(knownKeyTypes(e, 'host.example')).toEqual(['ssh-rsa', 'ssh-ed25519']);
  });

  it('offers the signature algorithms of those types and nothing for types it cannot use', () => {
    expect(hostKeyAlgorithms(['ssh-ed25519'])).toEqual(['ssh-ed25519']);
    expect(hostKeyAlgorithms(['ssh-rsa', 'ssh-ed25519'])).toEqual(['rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa', 'ssh-ed25519']);
    expect(hostKeyAlgorithms(['sk-ssh-ed25519@openssh.com'])).toEqual([]);
    expect(hostKeyAlgorithms([])).toEqual([]);
  });

  it('reads the type out of a key blob and refuses truncated blobs', () => {
    expect(keyTypeOfBlob(k1)).toBe('ssh-ed25519');
    const len = Buffer.alloc(4);
    len.writeUInt32BE(11);
    expect(keyTypeOfBlob(Buffer.concat([len, Buffer.from('ssh-ed25519')]))).toBe('ssh-ed25519');
    expect(keyTypeOfBlob(Buffer.concat([len, Buffer.from('ssh-ed2551')]))).toBeNull();
    expect(keyTypeOfBlob(Buffer.alloc(3))).toBeNull();
  });

  it('prints the fingerprint ssh-keygen prints', () => {
    expect(fingerprint(k1)).toBe(K1_FINGERPRINT);
  });
});

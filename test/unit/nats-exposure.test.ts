// The hub's refusal to start on a NATS anyone could use (exposure.ts): off this machine it needs
// credentials and TLS, each unless explicitly waived; on loopback nothing leaves the machine.

import { existsSync } from 'node:fs';
import { expect, it } from 'vitest';
import { exposureRefusal, onLoopback, type Exposure } from '../../hub/nats/exposure.js';

const base: Exposure = { servers: [], authRequired: false, tls: false, allowUnauthenticated: false, allowPlaintext: false };
const refusal = (o: Partial<Exposure>) => exposureRefusal({ ...base, ...o });

it('tells loopback servers from the rest', () => {
  for (const s of ['nats://127.0.0.1:4222', 'nats://127.3.4.5:4222', 'tls://localhost:4222', 'nats://[::1]:4222']) expect(onLoopback(s), s).toBe(true);
  for (const s of ['nats://10.0.0.5:4222', 'tls://nats-a.lan:4222', 'nats://0.0.0.0:4222', 'nats://127.0.0.1.evil.example:4222', 'not a url'])
    expect(onLoopback(s), s).toBe(false);
});

it('starts on loopback with no credentials and no TLS', () => {
  expect(refusal({ servers: ['nats://127.0.0.1:4222', 'nats://localhost:4223'] })).toBeNull();
});

it('refuses, in one line, an unauthenticated NATS off this machine, naming it and the override', () => {
  const r = refusal({ servers: ['nats://127.0.0.1:4222', 'nats://10.0.0.5:4222'], tls: true });
  expect(r).not.toBeNull();
  expect(r).not.toContain('\n');
  expect(r).toContain('nats://10.0.0.5:4222');
  expect(r).not.toContain('127.0.0.1');
  expect(r).toMatch(/asks no credentials/);
  expect(r).toMatch(/allow_unauthenticated = true/);
  // The shipped file it points to is there.
  const named = /deploy\/nats\/[\w.-]+\.conf/.exec(r!)?.[0];
  expect(named).toBeDefined();
  expect(existsSync(named!), named).toBe(true);
});

it('refuses, in one line, a plaintext NATS off this machine even with credentials', () => {
  const r = refusal({ servers: ['nats://10.0.0.5:4222'], authRequired: true });
  expect(r).not.toBeNull();
  expect(r).not.toContain('\n');
  expect(r).toMatch(/without TLS/);
  expect(r).toMatch(/allow_plaintext = true/);
});

it('starts off this machine with credentials and TLS, or when each gap is waived explicitly', () => {
  const off = ['tls://nats-a.lan:4222'];
  expect(refusal({ servers: off, authRequired: true, tls: true })).toBeNull();
  expect(refusal({ servers: off, allowUnauthenticated: true, tls: true })).toBeNull();
  expect(refusal({ servers: off, authRequired: true, allowPlaintext: true })).toBeNull();
  expect(refusal({ servers: off, allowUnauthenticated: true, allowPlaintext: true })).toBeNull();
  // One waiver does not stand for the other.
  expect(refusal({ servers: off, allowPlaintext: true })).toMatch(/asks no credentials/);
  expect(refusal({ servers: off, allowUnauthenticated: true })).toMatch(/without TLS/);
});

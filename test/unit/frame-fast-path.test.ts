import { describe, expect, it } from 'vitest';
import { plainCollectorFrame } from '../../shared/frame-fast-path.js';
import { MAX_FRAME_BYTES, collectorFrame, decodeFrame } from '../../shared/protocol.js';
import { PROTOCOL_ROW_KEYS, protocolRowObject } from '../../shared/row.js';

function row(): Record<string, unknown> {
  return protocolRowObject({
    pane: '%3',
    agent: 'claude',
    state: 'working',
    detail: null,
    since: 1,
    since_ms: 1,
    episode_ms: 2,
    locator: 'w:1.0',
    attention: false,
    done: false,
    session: 's',
    transcript: '/t',
    permission_request: null,
    stamped_at_ms: 5,
    context: 42,
    context_at_ms: null,
    muted: false,
    tokens: 10,
    quota: null,
    cost_usd: 0.5,
    repo: 'r',
    branch: 'main',
    worktree: false,
    pending_tool: null,
    pending_call: null,
    pending_summary: null,
    server: '/tmp/s',
    host: 'h1',
    prompt_id: null,
  });
}

const delta = (upserts: unknown[], extra: Record<string, unknown> = {}) => ({
  type: 'delta',
  epoch: 'b3c4d5e6f708192a',
  seq: 7,
  server: '/tmp/s',
  incarnation: 'i1',
  upserts,
  removals: ['%9'],
  ...extra,
});

/** Values that break some key's rule, or sit right at its edge. */
const ODD_VALUES: unknown[] = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  2 ** 53,
  -0,
  '',
  'x',
  '%1',
  'x'.repeat(64),
  'x'.repeat(65),
  'x'.repeat(253),
  'x'.repeat(254),
  'x'.repeat(1024),
  'x'.repeat(1025),
  'x'.repeat(4096),
  'x'.repeat(4097),
  'idle',
  'blocked',
  'bogus',
  {},
  [],
  { a: 1 },
  { a: { b: { c: { d: { e: 1 } } } } },
  [1, 2, 3],
  '\u0000',
];

/** Texts, as they arrive on the wire (so `__proto__` and huge numbers behave as JSON.parse makes them). */
function corpus(): string[] {
  const out: string[] = [];
  const add = (v: unknown) => out.push(JSON.stringify(v));
  add(delta([row()]));
  add(delta([row(), { ...row(), pane: '%4' }]));
  add(delta([]));
  for (const k of [...PROTOCOL_ROW_KEYS, 'title', 'extra_key', 'quota']) {
    for (const v of ODD_VALUES) add(delta([{ ...row(), [k]: v }]));
    const without = row();
    delete without[k];
    add(delta([without]));
  }
  for (const k of ['type', 'epoch', 'seq', 'server', 'incarnation', 'upserts', 'removals', 'extra']) {
    for (const v of [...ODD_VALUES, 'B3C4D5E6F708192A', 'b3c4d5e6f708192a', ['%1'], [row()]]) add(delta([row()], { [k]: v }));
  }
  const t = JSON.stringify(delta([row()]));
  out.push(t.replace('"tokens":10', '"tokens":1e400'));
  out.push(t.replace('"seq":7', '"seq":1e400'));
  out.push(t.replace('"seq":7', '"seq":7.0'));
  out.push(t.replace('"pane":"%3"', '"__proto__":{"x":1},"pane":"%3"'));
  out.push(t.replace('{"type":"delta"', '{"__proto__":null,"type":"delta"'));
  out.push(t.replace('"prompt_id":null', '"prompt_id":"abc","prompt_id":null'));
  for (const hb of [{ at: 1 }, { at: 1, seq: 2 }, { at: -1 }, { at: 1.5 }, { at: 1, seq: -1 }, { at: 1, seq: null }, { at: 1, x: 1 }, {}, { seq: 1 }]) {
    add({ type: 'heartbeat', ...hb });
  }
  add({ type: 'hello', protocol: 1, host: 'h', collector_version: 'v', epoch: 'b3c4d5e6f708192a', actions_allowed: [] });
  add([delta([row()])]);
  return out;
}

describe('frame fast path', () => {
  it('accepts only frames the schema accepts, and hands them on as the schema would', () => {
    let fast = 0;
    for (const text of corpus()) {
      const raw = JSON.parse(text) as unknown;
      const schema = collectorFrame.safeParse(raw);
      if (plainCollectorFrame(raw)) {
        fast++;
        expect(schema.success, text.slice(0, 200)).toBe(true);
        expect(raw).toEqual(schema.data);
      }
      // Whatever path decides, decodeFrame agrees with the schema on what is valid.
      expect(decodeFrame(text, 'from-collector').ok, text.slice(0, 200)).toBe(schema.success);
    }
    // The common frames do take the fast path (this is not a test of a path nothing uses).
    expect(fast).toBeGreaterThan(20);
    expect(plainCollectorFrame(JSON.parse(JSON.stringify(delta([row()]))))).toBe(true);
    expect(plainCollectorFrame({ type: 'heartbeat', at: 5, seq: 3 })).toBe(true);
  });

  it('leaves the wording of a refusal to the schema', () => {
    const bad = decodeFrame(JSON.stringify(delta([{ ...row(), title: 'secret' }])), 'from-collector');
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.error.message).toMatch(/title/);
    const nested = decodeFrame(JSON.stringify(delta([{ ...row(), quota: { a: { b: { c: { d: { e: 1 } } } } } }])), 'from-collector');
    expect(nested.ok).toBe(false);
    if (!nested.ok) expect(nested.error.message).toMatch(/nested deeper/);
  });
});

describe('the frame size bound', () => {
  it('counts UTF-8 bytes, not characters, whatever the shortcut for short frames', () => {
    // 350,000 three-byte characters: fewer characters than the limit in bytes, more bytes.
    const wide = JSON.stringify({ type: 'heartbeat', at: 1, pad: '€'.repeat(350_000) });
    expect(wide.length).toBeLessThan(MAX_FRAME_BYTES);
    expect(decodeFrame(wide, 'from-collector')).toMatchObject({ ok: false, error: { code: 'too-large' } });
    const narrow = JSON.stringify({ type: 'heartbeat', at: 1, pad: 'e'.repeat(350_000) });
    expect(decodeFrame(narrow, 'from-collector')).toMatchObject({ ok: false, error: { code: 'bad-frame' } });
  });
});

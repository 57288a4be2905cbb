import { describe, expect, it } from 'vitest';
import { FIELD_COUNT, LIST_PANES_FORMAT, OPTION_KEYS, PaneListError, parsePaneLine, SEP } from '../../collector/engine/pane-list.js';

function line(over: Record<number, string> = {}, title = 'a title'): string {
  const f = ['%3', '4242', 'work', '2', '1', 'claude', '1790000000', '0', '', '24', '/src/api'];
  const opts = OPTION_KEYS.map(() => '');
  const fields = [...f, ...opts, 'idle:1', 'idle:2', title];
  for (const [i, v] of Object.entries(over)) fields[Number(i)] = v;
  return fields.join(SEP);
}

describe('list-panes record', () => {
  it('the format has one field per key and the title last', () => {
    expect(LIST_PANES_FORMAT.split(SEP)).toHaveLength(FIELD_COUNT);
    expect(LIST_PANES_FORMAT.endsWith('#{pane_title}')).toBe(true);
    expect(FIELD_COUNT).toBe(52);
  });

  it('parses fields; empty options are absent; scroll position empty is null', () => {
    const r = parsePaneLine(line({ 12: 'working' }));
    expect(r).toMatchObject({
      paneId: '%3',
      panePid: 4242,
      sessionName: 'work',
      windowIndex: 2,
      paneIndex: 1,
      currentCommand: 'claude',
      windowActivity: 1790000000,
      scrollPosition: null,
      height: 24,
      currentPath: '/src/api',
      windowSummary: 'idle:1',
      sessionSummary: 'idle:2',
    });
    expect(r.options).toEqual({ '@agent_state': 'working' });
  });

  it('a title may hold the separator itself', () => {
    expect(parsePaneLine(line({}, `x${SEP}y`)).title).toBe(`x${SEP}y`);
  });

  it('too few fields is an error', () => {
    expect(() => parsePaneLine('%1\u001f2')).toThrow(PaneListError);
  });
});

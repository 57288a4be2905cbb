// Every verb of the verb table says where its printed fields are proven inert (the hostile tests,
// test/integration/*-terminal-hostile.test.ts), or why it prints nothing a host or hub sent: a verb
// added without a line in test/support/hostile-text.ts fails here.

import { describe, expect, it } from 'vitest';
import { VERB_TABLE } from '../../cli/verb-table.js';
import { VERB_COVERAGE } from '../support/hostile-text.js';

describe('the hostile-text coverage table', () => {
  it('names exactly the verbs of the verb table', () => {
    expect(Object.keys(VERB_COVERAGE).sort()).toEqual(Object.keys(VERB_TABLE).sort());
  });

  it('claims fleet coverage only for verbs that have a fleet form', () => {
    const fleetless = Object.entries(VERB_COVERAGE)
      .filter(([v, c]) => (c === 'fleet' || c === 'fleet+local') && (VERB_TABLE as Record<string, { fleet?: unknown }>)[v]!.fleet === undefined)
      .map(([v]) => v);
    expect(fleetless).toEqual([]);
  });
});

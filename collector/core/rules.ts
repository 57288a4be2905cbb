// The screen-rule engine: a manifest's rules against one snapshot, yielding at most one claim
// per state for the fold, plus a report of every rule for doctor/debug.

import { matches } from './matchers.js';
import { regionText } from './regions.js';
import type { AgentManifest, Evaluation, Evidence, Region, Rule, RuleMatch, Snapshot, State } from './types.js';

function regionKey(region: Region): string {
  return region.kind === 'tail_lines' ? `tail_lines:${region.n}` : region.kind;
}

export function evaluate(manifest: AgentManifest, snap: Snapshot): Evaluation {
  // Many rules share a region; splitting and stripping a 50-line capture once per region is enough.
  const texts = new Map<string, string>();
  const textFor = (region: Region): string => {
    const key = regionKey(region);
    let text = texts.get(key);
    if (text === undefined) {
      text = regionText(region, snap);
      texts.set(key, text);
    }
    return text;
  };

  const best = new Map<State, Rule>();
  const reports: RuleMatch[] = [];
  let historyView = false;

  for (const rule of manifest.rules) {
    const matched = matches(rule.match, textFor(rule.region));
    reports.push({ index: rule.index, state: rule.state, matched, skipStateUpdate: rule.skipStateUpdate });
    if (!matched) continue;
    if (rule.skipStateUpdate) {
      // A scrollback/transcript view shows old dialogs; it freezes the state instead of claiming.
      historyView = true;
      continue;
    }
    const held = best.get(rule.state);
    // Strictly greater: on a tie the rule written first in the manifest keeps the slot.
    if (held === undefined || rule.priority > held.priority) best.set(rule.state, rule);
  }

  const evidence: Evidence[] = [...best.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([state, rule]): Evidence => ({
      provenance: rule.region.kind === 'title' ? 'title' : 'screen_rule',
      claim: { kind: 'state', state, detail: rule.detail },
      at: snap.capturedAt,
      label: `${manifest.name} r${rule.index}`,
    }));

  return { evidence, matches: reports, historyView };
}

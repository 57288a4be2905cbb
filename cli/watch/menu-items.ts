// A pane's action menu: every action that applies to its agent, each either fireable or with the
// reason it would not fire, judged by the broker's own pre-check (collector/act/preview.ts) on the
// stamp as stored. Shared by the picker's Tab and `tma act --menu`.

import { processAlive } from '../../collector/act/broker.js';
import { readPaneFacts } from '../../collector/act/facts.js';
import { appliesTo } from '../../collector/act/gate.js';
import { fireability, type PreviewContext } from '../../collector/act/preview.js';
import type { ActionManifest } from '../../collector/core/action-manifest.js';
import type { Engine } from '../../collector/engine/cycle.js';
import { loadActions } from '../../collector/manifest-files.js';
import type { MenuItem } from './model.js';

/** The broker's refusal tokens in words a person reads on the menu. */
export const REFUSAL_WORDS: Record<string, string> = {
  gated: 'the pane is not in the state this action needs',
  'wrong-agent': 'not for this agent',
  'no-coverage': 'nothing reports what this action needs',
  'requires-unmet': 'the agent has not reported what this action needs',
  locked: 'another action is running on this pane',
  answered: 'this prompt was answered already',
};

export const refusalText = (r: string) => (REFUSAL_WORDS[r] ? `${r} (${REFUSAL_WORDS[r]})` : r);

export function loadActionList(env: NodeJS.ProcessEnv): ActionManifest[] {
  const set = loadActions({ env });
  if (!set.ok) throw new Error(`action load failed: ${set.issues.map((i) => `${i.file}: ${i.problem}`).join('; ')}`);
  return set.actions;
}

/** null when the pane is gone. */
export async function localMenu(
  engine: Engine,
  apiBase: Readonly<Record<string, string>>,
  pane: string,
  actions: readonly ActionManifest[],
): Promise<MenuItem[] | null> {
  const f = await readPaneFacts(engine.runner, pane);
  if (f === null) return null;
  const ctx: PreviewContext = { engine, apiBase, now: Date.now(), pidAlive: processAlive };
  return actions
    .filter((a) => appliesTo(a, f.agent))
    .map((a) => {
      const reason = fireability(a, f, ctx);
      return { action: a.name, label: a.label, refusal: reason === null ? null : refusalText(reason) };
    });
}

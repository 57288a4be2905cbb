// config.toml `[[agent]]` entries applied to a loaded manifest set.

import type { AgentManifest, ManifestSet } from './types.js';

export interface AgentConfigEntry {
  name: string;
  enabled?: boolean;
  process_names?: string[];
}

/**
 * Apply config.toml `[[agent]]` entries: `enabled = false` drops the agent, `process_names`
 * adds names (never replaces: the manifest's own names keep working). Entries naming an agent
 * that is not loaded change nothing. Returns a new set; the input is not modified.
 */
export function applyAgentConfig(set: ManifestSet, agents: readonly AgentConfigEntry[]): ManifestSet {
  const manifests: AgentManifest[] = [];
  for (const m of set.manifests) {
    const entries = agents.filter((a) => a.name === m.name);
    if (entries.some((a) => a.enabled === false)) continue;
    const names = [...m.identity.processNames];
    for (const a of entries) for (const n of a.process_names ?? []) if (!names.includes(n)) names.push(n);
    manifests.push({ ...m, identity: { ...m.identity, processNames: names } });
  }
  return { manifests, issues: [...set.issues] };
}

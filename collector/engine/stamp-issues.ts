// Stamps we cannot read, or should not trust, are surfaced by doctor rather than silently dropped.

import { decodeStamp } from '../core/store-codec.js';
import type { PaneRecord } from './pane-list.js';

/** The two shapes of a stamp another writer left that we cannot (or should not) trust. */
export function stampProblem(rec: PaneRecord): string | null {
  const d = decodeStamp(rec.options);
  if (!d.ok) return `${d.problem} (is another tool writing @agent_* options?)`;
  if (rec.options['@agent_state'] !== undefined && rec.options['@agent_stamped_at'] === undefined) {
    return `@agent_state "${rec.options['@agent_state']}" has no @agent_stamped_at (is another tool writing @agent_* options?)`;
  }
  return null;
}

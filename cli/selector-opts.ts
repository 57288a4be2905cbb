import { EMPTY_SELECTOR, parseStateList, SelectorError, type Selector } from '../shared/selectors.js';
import { UsageError, type Parsed } from './args.js';
import type { SELECTOR } from './verb-flags.js';

/** The selector flags of a verb; `--host` only means something against a hub. */
export function selectorFrom(p: Parsed<typeof SELECTOR>, opts: { fleet: boolean }): Selector {
  const o = p.opts;
  if (!opts.fleet && o.host !== undefined) throw new UsageError('--host needs --hub');
  let states = EMPTY_SELECTOR.states;
  try {
    if (o.state !== undefined) states = parseStateList(o.state);
  } catch (e) {
    if (e instanceof SelectorError) throw new UsageError(e.message);
    throw e;
  }
  return {
    states,
    agent: o.agent ?? null,
    session: o.session ?? null,
    repo: o.repo ?? null,
    branch: o.branch ?? null,
    host: o.host ?? null,
  };
}

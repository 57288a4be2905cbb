import { EMPTY_SELECTOR, parseStateList, SelectorError, type Selector } from '../shared/selectors.js';
import { str, UsageError, type Parsed } from './args.js';

/** The selector flags of a verb; `--host` only means something against a hub. */
export function selectorFrom(p: Parsed, opts: { fleet: boolean }): Selector {
  const o = p.opts;
  if (!opts.fleet && o.host !== undefined) throw new UsageError('--host needs --hub');
  let states = EMPTY_SELECTOR.states;
  try {
    if (o.state !== undefined) states = parseStateList(str(o.state) ?? '');
  } catch (e) {
    if (e instanceof SelectorError) throw new UsageError(e.message);
    throw e;
  }
  return {
    states,
    agent: str(o.agent) ?? null,
    session: str(o.session) ?? null,
    repo: str(o.repo) ?? null,
    branch: str(o.branch) ?? null,
    host: str(o.host) ?? null,
  };
}

// `tma --hub URL forget HOST`: the hub drops a host and its rows (an operator token). A host whose
// link is up is refused: it would only come back.

import { UsageError, type Parsed } from '../args.js';
import { ExitError } from '../local.js';
import { dispatcherOf, hubTarget, unreachable } from './hub-client.js';

export async function main(p: Parsed): Promise<number> {
  const host = p.positionals[0];
  if (!host) throw new UsageError('forget needs a host name: tma --hub URL forget HOST');
  if (p.positionals.length > 1) throw new UsageError(`unexpected argument "${p.positionals[1]}"`);
  const t = hubTarget(p, process.env);
  const via = await dispatcherOf(t);
  let res: Response;
  try {
    res = await fetch(new URL(`/v1/hosts/${encodeURIComponent(host)}`, t.base), {
      ...via,
      method: 'DELETE',
      headers: t.token ? { authorization: `Bearer ${t.token}` } : {},
      signal: AbortSignal.timeout(10_000),
    });
  } catch (e) {
    throw await unreachable(t, e);
  }
  let detail = '';
  try {
    detail = ((await res.json()) as { error?: string }).error ?? '';
  } catch {
    // not JSON
  }
  if (res.ok) {
    process.stdout.write(`forgot ${host}\n`);
    return 0;
  }
  // Exit codes as for act: 3 for no such host, 1 otherwise.
  throw new ExitError(`cannot forget ${host}: ${detail || `the hub answered ${res.status}`}`, res.status === 404 ? 3 : 1);
}

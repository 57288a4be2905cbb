// The mute window a person asked for, shared by the local and the fleet `mute`: `--for` and
// `--clear` exclude each other, and a duration that does not parse is a usage error.

import { DurationError, parseMuteDuration, type MuteDuration } from '../collector/act/mute-duration.js';
import { UsageError, type Parsed } from './args.js';
import type { MUTE } from './verb-flags.js';

/** `clear` unmutes; otherwise `window` is how long, null meaning indefinitely. */
export function muteWindowOf(p: Parsed<typeof MUTE>): { clear: boolean; window: MuteDuration | null } {
  const clear = p.opts.clear === true;
  const forRaw = p.opts.for;
  if (clear && forRaw !== undefined) throw new UsageError('--for cannot be combined with --clear');
  if (forRaw === undefined) return { clear, window: null };
  try {
    return { clear, window: parseMuteDuration(forRaw) };
  } catch (e) {
    if (e instanceof DurationError) throw new UsageError(e.message);
    throw e;
  }
}

// The level of `tma hub` and `tma collector` logs: --log-level, else TMA_LOG_LEVEL, else info.
// A value that is not a level is a usage error (exit 2) before anything starts.

import { pickLogLevel, type LogLevel } from '../shared/log-level.js';
import { UsageError, type Parsed } from './args.js';

export function logLevelOf(p: Parsed, env: NodeJS.ProcessEnv): LogLevel {
  try {
    return pickLogLevel(p.globals['log-level'], env);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

// Log levels and the plain-line logging callback, kept apart from shared/log.ts so the parts that
// only pass lines along (the collector's links, its publisher) never load pino themselves.

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** What a part says about itself, one line at a time; the level defaults to info. */
export type LineLog = (line: string, level?: 'debug' | 'info' | 'warn' | 'error') => void;

/**
 * The level asked for: the flag wins over the environment, info when neither says. A value that
 * is not a level is an error naming where it came from, so a typo is not silently ignored.
 */
export function pickLogLevel(flag: string | undefined, env: NodeJS.ProcessEnv): LogLevel {
  const [value, from] = flag !== undefined ? [flag, '--log-level'] : [env.TMA_LOG_LEVEL || undefined, 'TMA_LOG_LEVEL'];
  if (value === undefined) return 'info';
  const v = value.toLowerCase();
  if ((LOG_LEVELS as readonly string[]).includes(v)) return v as LogLevel;
  throw new RangeError(`${from} must be one of ${LOG_LEVELS.join('|')}, not ${JSON.stringify(value)}`);
}

// The one logger setup of the long-running processes (`tma hub`, `tma collector`): pino on
// stderr, JSON lines for journald and log shippers, one readable line per record when a person
// watches a terminal. Only those verbs import this file: one-shot verbs never load pino.

import { pino, type Logger } from 'pino';
import type { LineLog, LogLevel } from './log-level.js';

export type { Logger };

/** Never written, whatever a caller passes in by mistake. */
const REDACT = ['authorization', 'token', '*.authorization', '*.token'];

/** `key=value` for a record's own fields; values with spaces or quotes are JSON-quoted. */
export function fieldsText(fields: Record<string, unknown>): string {
  return Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => {
      const s = typeof v === 'string' ? v : JSON.stringify(v);
      return `${k}=${/^[^\s"=]+$/.test(s) ? s : JSON.stringify(s)}`;
    })
    .join(' ');
}

/** Keys pino writes on every record; the rest are the record's own fields. */
const BASE_KEYS = new Set(['level', 'time', 'pid', 'hostname', 'name', 'msg']);

export async function createLogger(o: { name: string; level: LogLevel; pretty?: boolean }): Promise<Logger> {
  const base = { name: o.name, level: o.level, redact: REDACT };
  if (!(o.pretty ?? process.stderr.isTTY === true)) return pino(base, pino.destination({ fd: 2, sync: true }));
  // Loaded only for a terminal: a service under systemd never pays for it.
  const { default: pretty } = await import('pino-pretty');
  return pino(
    base,
    pretty({
      destination: 2,
      sync: true,
      colorize: process.stderr.isTTY === true,
      translateTime: 'SYS:HH:MM:ss',
      ignore: 'pid,hostname',
      hideObject: true,
      messageFormat: (log) => {
        const own = Object.fromEntries(Object.entries(log).filter(([k]) => !BASE_KEYS.has(k)));
        const extra = fieldsText(own);
        return extra ? `${String(log.msg ?? '')} ${extra}` : String(log.msg ?? '');
      },
    }),
  );
}

/** A plain-line callback (what collector parts take) writing into a logger. */
export function lineLogTo(logger: Logger, fields: Record<string, unknown> = {}): LineLog {
  return (line, level = 'info') => logger[level](fields, line);
}

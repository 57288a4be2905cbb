// doctor's heartbeat and output-watch lines, from what tmux answers.

import { describe, expect, it } from 'vitest';
import { renderWatch, watchReport } from '../../cli/verbs/doctor-watch.js';

const NOW = 1_700_000_000_000;
const S = '\u001f';
const sessions = [`$0${S}main`, `$1${S}work`].join('\n') + '\n';

describe('watchReport', () => {
  it('a fresh heartbeat and an output client on every session: live', () => {
    const clients = [
      `$0${S}1${S}attached,control-mode,ignore-size,UTF-8`,
      `$1${S}1${S}attached,control-mode,ignore-size,UTF-8`,
      // The collector's command client does not receive output and is not counted.
      `$0${S}1${S}attached,control-mode,ignore-size,no-output,UTF-8`,
      // A person's terminal is not a watcher.
      `$1${S}0${S}attached,focused,UTF-8`,
    ].join('\n');
    const r = watchReport([`${NOW - 700}\n`, sessions, clients], NOW, 3000);
    expect(r).toEqual({
      heartbeat: { age_ms: 700, fresh: true },
      output_watch: {
        live: true,
        sessions: [
          { session: 'main', output_clients: 1 },
          { session: 'work', output_clients: 1 },
        ],
      },
    });
    expect(renderWatch(r)).toEqual([
      'collector: heartbeat 700 ms ago (stamps vouched for)',
      'output watch: live, 2 of 2 session(s) watched (main: 1, work: 1)',
    ]);
  });

  it('a session without an output client, or a stale heartbeat, is not live', () => {
    const one = `$0${S}1${S}attached,control-mode,ignore-size,UTF-8`;
    expect(watchReport([`${NOW - 700}`, sessions, one], NOW, 3000).output_watch.live).toBe(false);
    const both = `${one}\n$1${S}1${S}control-mode`;
    const stale = watchReport([`${NOW - 9000}`, sessions, both], NOW, 3000);
    expect(stale.heartbeat).toEqual({ age_ms: 9000, fresh: false });
    expect(stale.output_watch.live).toBe(false);
    expect(renderWatch(stale)[0]).toBe('collector: heartbeat 9000 ms ago (stale: no collector vouches for the stamps)');
  });

  it('no heartbeat at all, or one from the future, vouches for nothing', () => {
    expect(watchReport(['', sessions, ''], NOW, 3000).heartbeat).toEqual({ age_ms: null, fresh: false });
    expect(watchReport([`${NOW + 5000}`, sessions, ''], NOW, 3000).heartbeat).toEqual({ age_ms: 0, fresh: false });
    expect(renderWatch(watchReport(['', '', ''], NOW, 3000))).toEqual([
      "collector: no heartbeat (no collector watches this server's output)",
      'output watch: not live, 0 of 0 session(s) watched',
    ]);
  });
});

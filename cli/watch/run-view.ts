// One interactive view on a terminal: the source's rows and the person's keys in, frames out.
// The frame is redrawn when something it shows changed (rows, keys, an outcome, the preview, an
// age label turning over (at most once a minute)), never on a blind timer, and only its changed lines are written.

import { initialState, press, selected, visible, withMenu, withOutcome, withRows, type Effect, type Mode, type ViewState } from './model.js';
import { parseKeys } from './keys.js';
import { render, untilAgeChange } from './render.js';
import type { WatchRow } from './rows.js';
import type { Source } from './source.js';
import { openScreen } from './terminal.js';

export interface ViewOptions {
  mode: Mode;
  table: boolean;
  /** An initial filter (the picker's query typed on the command line). */
  filter?: string;
}

/** When the next age label among these rows changes (ms from now). */
export function nextAgeChange(rows: readonly WatchRow[], now: number): number {
  let next = Number.POSITIVE_INFINITY;
  for (const r of rows) if (r.since_ms > 0) next = Math.min(next, untilAgeChange(now - r.since_ms));
  return next;
}

export function runView(source: Source, opts: ViewOptions): Promise<number> {
  return new Promise((finish) => {
    let state: ViewState = { ...initialState(opts.mode), filter: opts.filter ?? '' };
    let preview: string[] | null = null;
    let previewFor: string | null = null;
    let ageTimer: NodeJS.Timeout | null = null;
    let done = false;
    let busy = false;

    const draw = () => {
      if (done) return;
      const now = Date.now();
      const hosts = source.fleet || new Set(state.shown.map((r) => r.host)).size > 1;
      const sel = selected(state);
      const previewNote = opts.mode !== 'watch' || sel === null ? null : sel.local ? null : `the screen of ${sel.host} ${sel.locator} stays on ${sel.host}`;
      screen.draw(
        render(state, {
          cols: screen.cols,
          rows: screen.rows,
          now,
          source: source.label,
          table: opts.table,
          hosts,
          preview: sel !== null && previewFor === sel.key ? preview : null,
          previewNote: previewNote ?? (sel?.local && previewFor !== sel.key ? 'reading the screen…' : null),
        }),
      );
      if (ageTimer) clearTimeout(ageTimer);
      const wait = nextAgeChange(visible(state), now);
      if (Number.isFinite(wait)) ageTimer = setTimeout(draw, wait + 20);
    };

    const refreshPreview = async () => {
      if (opts.mode !== 'watch') return;
      const sel = selected(state);
      if (sel === null || !sel.local) return;
      const lines = await source.preview(sel);
      if (done) return;
      const same = previewFor === sel.key && JSON.stringify(lines) === JSON.stringify(preview);
      previewFor = sel.key;
      preview = lines;
      if (!same) draw();
    };

    const quit = (code: number) => {
      if (done) return;
      done = true;
      if (ageTimer) clearTimeout(ageTimer);
      screen.restore();
      source.close();
      finish(code);
    };

    const run = async (effect: Effect) => {
      switch (effect.kind) {
        case 'quit': {
          quit(0);
          return;
        }
        case 'act': {
          const key = effect.row.key;
          state = withOutcome(state, key, 'sending');
          draw();
          const word = await source.act(effect.action, effect.row);
          state = withOutcome(state, key, word);
          state = { ...state, notice: `${effect.action} ${effect.row.agent} on ${effect.row.host} ${effect.row.locator}: ${word}` };
          draw();
          return;
        }
        case 'jump': {
          const err = await source.jump(effect.row);
          if (err === null && opts.mode === 'picker') {
            quit(0);
            return;
          }
          state = { ...state, notice: err === null ? `jumped to ${effect.row.host} ${effect.row.locator}` : `jump failed: ${err}` };
          draw();
          return;
        }
        case 'menu': {
          let items;
          try {
            items = await source.menu(effect.row);
          } catch (e) {
            state = { ...state, notice: (e as Error).message };
            draw();
            return;
          }
          state = withMenu(state, effect.row, items);
          draw();
          return;
        }
      }
    };

    const onKeys = (data: string) => {
      for (const key of parseKeys(data)) {
        if (done) return;
        const before = selected(state)?.key;
        const step = press(state, key);
        state = step.state;
        if (step.effect) {
          // One effect at a time: a key that arrives while an act is under way cannot fire another.
          if (step.effect.kind === 'quit') {
            quit(0);
            return;
          }
          if (busy) state = { ...state, notice: 'busy: the last action is still under way' };
          else {
            busy = true;
            void run(step.effect).finally(() => (busy = false));
          }
        }
        if (selected(state)?.key !== before) void refreshPreview();
      }
      draw();
    };

    const screen = openScreen({ onKeys, onResize: draw });
    draw();
    source.start((rows, trouble) => {
      if (done) return;
      state = withRows(state, rows, trouble);
      draw();
      void refreshPreview();
    });
  });
}

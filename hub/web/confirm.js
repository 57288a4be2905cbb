// The confirmation step before keys go into someone's terminal. It names the agent, host, pane
// and what is asked, and binds to the prompt as it was shown: if the row's episode or prompt id
// moves while the dialog is open, the confirm button dies and says why.

import { ACTION_VERB, askText, classOf, rowKey } from './format.js';

/** @typedef {import('./format.js').ShownRow} Row */

/** A second tap of a double-tap must not land on the confirm button that just appeared under it. */
const ARM_AFTER_MS = 400;

export class Confirm {
  /**
   * `dialog`: the <dialog>; `onChange(open)` tells the page when order must hold.
   * @param {HTMLDialogElement} dialog
   * @param {(open: boolean) => void} onChange
   */
  constructor(dialog, onChange) {
    this.d = dialog;
    this.onChange = onChange;
    /** @type {{ row: Row; key: string; action: string; fire: (row: Row, action: string) => void; changed: boolean } | null} */
    this.pending = null;
    /** @param {string} id */
    this.$ = (id) => /** @type {HTMLButtonElement} */ (dialog.querySelector(`#${id}`));
    this.$('confirm-cancel').addEventListener('click', () => this.close());
    this.$('confirm-go').addEventListener('click', () => this.go());
    dialog.addEventListener('close', () => this.finish());
  }

  get open() {
    return this.pending !== null;
  }

  /**
   * Ask about `action` on `row` (of `host`) as shown; `fire(row, action)` runs on confirm.
   * @param {Row} row
   * @param {string} action
   * @param {(row: Row, action: string) => void} fire
   * @param {import('./format.js').PageHost} [host]
   */
  ask(row, action, fire, host) {
    if (this.pending) this.close();
    this.pending = { row: { ...row }, key: rowKey(row), action, fire, changed: false };
    const verb = ACTION_VERB[action] ?? action;
    this.$('confirm-title').textContent = `${verb} ${row.agent} on ${row.host}?`;
    const repo = row.repo ? ` · ${row.repo}${row.branch ? ` @ ${row.branch}` : ''}` : '';
    this.$('confirm-where').textContent = `${row.locator || row.pane} (pane ${row.pane})${repo}`;
    this.$('confirm-ask').textContent = askText(row, host) || `${classOf(row)}${row.detail ? ` · ${row.detail}` : ''}`;
    this.$('confirm-changed').hidden = true;
    const go = this.$('confirm-go');
    go.textContent = verb;
    go.className = `primary act-${action}`;
    // Armed a moment later, so the second tap of a double-tap cannot answer the prompt.
    go.disabled = true;
    const mine = this.pending;
    setTimeout(() => {
      if (this.pending === mine && !mine.changed) go.disabled = false;
    }, ARM_AFTER_MS);
    go.setAttribute('aria-label', `${verb} ${row.agent} on ${row.host}, ${row.locator || row.pane}`);
    this.d.showModal();
    // Cancel first: a stray Enter must not answer a prompt.
    this.$('confirm-cancel').focus();
    this.onChange(true);
  }

  /**
   * Check the open dialog against the latest rows.
   * @param {readonly Row[]} rows
   */
  check(rows) {
    const p = this.pending;
    if (!p || p.changed) return;
    const now = rows.find((r) => rowKey(r) === p.key);
    const same =
      now !== undefined &&
      now.episode_ms === p.row.episode_ms &&
      (now.prompt_id ?? null) === (p.row.prompt_id ?? null) &&
      now.state === p.row.state &&
      now.detail === p.row.detail &&
      !now.stale;
    if (same) return;
    p.changed = true;
    this.$('confirm-changed').hidden = false;
    this.$('confirm-go').disabled = true;
  }

  go() {
    const p = this.pending;
    if (!p || p.changed || this.$('confirm-go').disabled) return;
    this.pending = null;
    this.d.close();
    p.fire(p.row, p.action);
  }

  close() {
    if (this.d.open) this.d.close();
    else this.finish();
  }

  finish() {
    this.pending = null;
    this.onChange(false);
  }
}

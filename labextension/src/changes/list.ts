// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

/**
 * Which reviews the panel's "Changes" list shows, and the words for their
 * states: pure, so that node can load the compiled file in tests.
 */

import type { TranslationBundle } from '@jupyterlab/translation';

/**
 * A review as the list needs it (`ReviewManager.IEntry`).
 */
export interface IChange {
  readonly callId: string;
  readonly kind: 'edit' | 'insert';
  readonly path: string;
  readonly cellId: string | null;
  /**
   * `open`, a decision of the person, `aborted`, or `reloaded` for a review
   * that was open when the page reloaded.
   */
  readonly state: string;
  readonly openedAt: number;
}

/**
 * The changes of the turn that started at `since`: every review opened
 * since then, in the order they opened, and any older one still open (it
 * still waits for the person). Without a turn (`null`), the open ones.
 * A change the list already shows in this turn (`shown`) stays once it is
 * decided: an older one kept or undone in this turn does not vanish.
 */
export function turnChanges(
  entries: readonly IChange[],
  since: number | null,
  shown: ReadonlySet<string> = new Set()
): IChange[] {
  return entries.filter(
    e =>
      e.state === 'open' ||
      shown.has(e.callId) ||
      (since !== null && e.openedAt >= since)
  );
}

/**
 * The callIds of the changes still open, for Keep all and Undo all.
 */
export function openCallIds(changes: readonly IChange[]): string[] {
  return changes.filter(c => c.state === 'open').map(c => c.callId);
}

/**
 * The word for a change's state.
 */
export function stateText(state: string, trans: TranslationBundle): string {
  switch (state) {
    case 'open':
      return trans.__('waiting for you');
    case 'keep':
      return trans.__('kept');
    case 'undo':
      return trans.__('undone');
    case 'conflict':
      return trans.__('not applied: the cell changed');
    case 'superseded':
      return trans.__('replaced by a newer proposal');
    case 'withdrawn':
      return trans.__('withdrawn');
    case 'aborted':
      return trans.__('withdrawn by the agent');
    case 'reloaded':
      return trans.__('ended with the page reload: nothing was changed');
    default:
      return state;
  }
}

// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

/**
 * The reviews that were open when the page reloaded. The server ends them
 * with their page, unapplied (docs/protocol.md section 6: a page that goes
 * away withdraws its open reviews); this module lets the next page of the
 * same browser tab say so. The tab's session storage holds the open
 * reviews of the page (tool call, kind, notebook path and cell id; never a
 * source), and the next page takes them once.
 */

import type { IChange } from './list';

/**
 * The session storage key of the open reviews.
 */
const KEY = 'jupyter-copilot:open-reviews';

/**
 * Note which reviews are open now; none clears the note.
 */
export function rememberOpen(entries: readonly IChange[]): void {
  const open = entries
    .filter(e => e.state === 'open')
    .map(({ callId, kind, path, cellId }) => ({ callId, kind, path, cellId }));
  try {
    if (open.length) {
      window.sessionStorage.setItem(KEY, JSON.stringify(open));
    } else {
      window.sessionStorage.removeItem(KEY);
    }
  } catch {
    // No session storage (a private window's quota, a sandboxed frame).
  }
}

/**
 * Whether the page before this one left open reviews.
 */
export function hasEndedReviews(): boolean {
  try {
    return window.sessionStorage.getItem(KEY) !== null;
  } catch {
    return false;
  }
}

/**
 * Take the reviews the page before this one left open, as changes in the
 * state `reloaded`; the note is cleared.
 */
export function takeEndedReviews(): IChange[] {
  let raw: string | null = null;
  try {
    raw = window.sessionStorage.getItem(KEY);
    window.sessionStorage.removeItem(KEY);
  } catch {
    return [];
  }
  return parseEnded(raw, performance.now());
}

/**
 * Read the note; anything malformed is left out.
 */
export function parseEnded(raw: string | null, now: number): IChange[] {
  let value: unknown;
  try {
    value = JSON.parse(raw ?? '[]');
  } catch {
    return [];
  }
  if (!Array.isArray(value)) {
    return [];
  }
  const changes: IChange[] = [];
  for (const item of value) {
    const e = item as Record<string, unknown> | null;
    if (
      !e ||
      typeof e.callId !== 'string' ||
      (e.kind !== 'edit' && e.kind !== 'insert') ||
      typeof e.path !== 'string' ||
      (e.cellId !== null && typeof e.cellId !== 'string')
    ) {
      continue;
    }
    changes.push({
      callId: e.callId,
      kind: e.kind,
      path: e.path,
      cellId: e.cellId as string | null,
      state: 'reloaded',
      openedAt: now
    });
  }
  return changes;
}

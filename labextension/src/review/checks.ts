// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

/**
 * The pure part of the edit-cell review: the page's check order on plain
 * data (docs/protocol.md section 5, steps 3, 6 and 7 as the page sees them), the
 * minimal replacement that Keep applies, and the words shown for refusals.
 *
 * This module imports only other pure modules, so that node can load the
 * compiled file directly in tests.
 */

import type { TranslationBundle } from '@jupyterlab/translation';
import type { PageCode as AnyPageCode } from '../generated/vocabulary';
import { REFUSAL_TEXT } from '../generated/vocabulary.js';
import { sourceHash } from '../hash.js';

/**
 * The codes the page may refuse an edit-cell invoke with (contract 9): the
 * vocabulary's page codes but the three any action may answer.
 */
export type PageCode = Exclude<
  AnyPageCode,
  'unknown-action' | 'invalid-input' | 'page-error'
>;

/**
 * The request data of `jupyter_copilot.notebook.edit-cell.invoke`.
 */
export interface IEditProposal {
  callId: string;
  artifactId: string;
  path: string;
  cellId: string;
  expectedSourceHash: string;
  newSource: string;
  /** The type the server served for that cell and hash, when it did. */
  expectedCellType: string | null;
}

/**
 * What the checks need to know of the target cell, read from the live model.
 */
export interface ICellFacts {
  /** `code`, `markdown` or `raw`. */
  cellType: string;
  /** The cell's `metadata.editable`, as it is (`false` means locked). */
  editable: unknown;
  /** The complete current source. */
  source: string;
}

/**
 * A refusal: a page code and plain words for a person, never source.
 */
export interface ICheckFailure {
  code: PageCode;
  message: string;
}

/**
 * One replacement of `[start, end)` of the old source by `text`.
 */
export interface IReplacement {
  start: number;
  end: number;
  text: string;
}

/**
 * Read an invoke request's data; `null` when a field is missing or of the
 * wrong type (the server validated it already, so this is a defence only).
 */
export function parseProposal(
  data: Record<string, unknown>
): IEditProposal | null {
  const strings = [
    'callId',
    'artifactId',
    'path',
    'cellId',
    'expectedSourceHash',
    'newSource'
  ];
  if (!strings.every(key => typeof data[key] === 'string')) {
    return null;
  }
  const type = data.expectedCellType;
  if (type !== undefined && type !== null && typeof type !== 'string') {
    return null;
  }
  return {
    callId: data.callId as string,
    artifactId: data.artifactId as string,
    path: data.path as string,
    cellId: data.cellId as string,
    expectedSourceHash: data.expectedSourceHash as string,
    newSource: data.newSource as string,
    expectedCellType: (type as string | null | undefined) ?? null
  };
}

/**
 * The request data of `jupyter_copilot.notebook.insert-cell.invoke`
 * (docs/protocol.md section 11.1).
 */
export interface IInsertProposal {
  callId: string;
  artifactId: string;
  path: string;
  /** The cell the new one goes after; `null`: at the top. */
  afterCellId: string | null;
  cellType: 'code' | 'markdown' | 'raw';
  source: string;
}

/**
 * Read an insert request's data; `null` when a field is missing or of the
 * wrong type (the server validated it already, so this is a defence only).
 */
export function parseInsert(
  data: Record<string, unknown>
): IInsertProposal | null {
  const strings = ['callId', 'artifactId', 'path', 'source'];
  if (!strings.every(key => typeof data[key] === 'string')) {
    return null;
  }
  const after = data.afterCellId;
  if (after !== null && (typeof after !== 'string' || !after)) {
    return null;
  }
  const type = data.cellType;
  if (type !== 'code' && type !== 'markdown' && type !== 'raw') {
    return null;
  }
  return {
    callId: data.callId as string,
    artifactId: data.artifactId as string,
    path: data.path as string,
    afterCellId: after,
    cellType: type,
    source: data.source as string
  };
}

/**
 * The page's checks of an insert request (section 11.1, steps 3 and 6 as
 * the page sees them): the first failure, or `null` when the pending cell
 * may be shown.
 *
 * @param proposal - The insert request.
 * @param path - The active notebook's path.
 * @param anchorFound - Whether the notebook has the cell `afterCellId`
 *   (ignored for an insert at the top).
 */
export function checkInsert(
  proposal: IInsertProposal,
  path: string,
  anchorFound: boolean
): ICheckFailure | null {
  if (path !== proposal.path) {
    return Private.fail('artifact-mismatch');
  }
  if (proposal.afterCellId !== null && !anchorFound) {
    return Private.fail('cell-not-found');
  }
  return null;
}

/**
 * Run the data checks of an invoke in the contract's order and return the
 * first failure, or `null` when the review may be shown.
 *
 * @param proposal - The invoke request.
 * @param path - The active notebook's path (`context.path`).
 * @param cell - The facts of the cell with `proposal.cellId`, `null` if none.
 */
export function checkProposal(
  proposal: IEditProposal,
  path: string,
  cell: ICellFacts | null
): ICheckFailure | null {
  if (path !== proposal.path) {
    return Private.fail('artifact-mismatch');
  }
  if (!cell) {
    return Private.fail('cell-not-found');
  }
  if (cell.editable === false) {
    return Private.fail('cell-locked');
  }
  if (
    proposal.expectedCellType !== null &&
    cell.cellType !== proposal.expectedCellType
  ) {
    return Private.fail('cell-type-mismatch');
  }
  if (sourceHash(cell.source) !== proposal.expectedSourceHash) {
    return Private.fail('stale-source');
  }
  return null;
}

/**
 * The smallest single replacement that turns `before` into `after`: the
 * common prefix and suffix stay, so collaborators' cursors and the editor's
 * selection outside the change survive. A surrogate pair is never split.
 *
 * @param before - The current source.
 * @param after - The source to reach.
 */
export function replacement(before: string, after: string): IReplacement {
  const max = Math.min(before.length, after.length);
  let start = 0;
  while (start < max && before.charCodeAt(start) === after.charCodeAt(start)) {
    start++;
  }
  if (start > 0 && Private.isHighSurrogate(before.charCodeAt(start - 1))) {
    start--;
  }
  let tail = 0;
  while (
    tail < max - start &&
    before.charCodeAt(before.length - 1 - tail) ===
      after.charCodeAt(after.length - 1 - tail)
  ) {
    tail++;
  }
  if (
    tail > 0 &&
    Private.isLowSurrogate(before.charCodeAt(before.length - tail))
  ) {
    tail--;
  }
  return {
    start,
    end: before.length - tail,
    text: after.slice(start, after.length - tail)
  };
}

/**
 * The status line for a Keep that the server refused.
 *
 * @param code - The `keep-verdict` code, e.g. `kill-switch` or `aborted`.
 */
export function verdictMessage(
  code: string | undefined,
  trans: TranslationBundle
): string {
  switch (code) {
    case 'kill-switch':
      return Messages.toolsDisabled(trans);
    case 'feature-disabled':
      return trans.__(
        '%1 This proposal can no longer be kept.',
        trans.__(REFUSAL_TEXT['feature-disabled'])
      );
    case 'aborted':
      return trans.__('This proposal was withdrawn.');
    case 'no-active-session':
      return trans.__(
        "The notebook's kernel session ended; this proposal can no longer be kept."
      );
    case 'timeout':
      return trans.__(
        'The Copilot server did not confirm in time; nothing was applied.'
      );
    default:
      return trans.__(
        'The Copilot server did not allow this edit; nothing was applied.'
      );
  }
}

/**
 * The fixed status lines of a review.
 */
export namespace Messages {
  /** Tools are disabled by the kill switch. */
  export function toolsDisabled(trans: TranslationBundle): string {
    return trans.__(
      'Copilot edits were turned off by the administrator; this proposal can no longer be kept.'
    );
  }
  /** Keep is waiting for the server's verdict. */
  export function keeping(trans: TranslationBundle): string {
    return trans.__('Checking with the Copilot server…');
  }
  /** The cell changed between the proposal and Keep. */
  export function conflict(trans: TranslationBundle): string {
    return trans.__(
      'The cell changed since this was proposed; nothing was applied.'
    );
  }
  /** The cell a pending insert was to follow is gone. */
  export function anchorGone(trans: TranslationBundle): string {
    return trans.__(
      'The cell this was to follow is gone; nothing was inserted.'
    );
  }
  /** The cell was locked between the proposal and Keep. */
  export function locked(trans: TranslationBundle): string {
    return trans.__(
      'The cell was locked since this was proposed; nothing was applied.'
    );
  }
}

namespace Private {
  /**
   * A check failure, in the code's default words (vocabulary.json).
   */
  export function fail(code: PageCode): ICheckFailure {
    return { code, message: REFUSAL_TEXT[code] };
  }

  /**
   * Whether a UTF-16 code unit starts a surrogate pair.
   */
  export function isHighSurrogate(c: number): boolean {
    return c >= 0xd800 && c <= 0xdbff;
  }

  /**
   * Whether a UTF-16 code unit ends a surrogate pair.
   */
  export function isLowSurrogate(c: number): boolean {
    return c >= 0xdc00 && c <= 0xdfff;
  }
}

// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

/**
 * The pure part of `notebook_run_cell` on the page (docs/protocol.md
 * section 11.2): the request's shape, the run mark, the page's check order
 * on plain data and how a run ended.
 *
 * This module imports only other pure modules, so that node can load the
 * compiled file directly in tests.
 */

import type { RunEnding } from '../generated/vocabulary';
import { REFUSAL_TEXT, RUN_MARK_KEYS } from '../generated/vocabulary.js';
import { sourceHash } from '../hash.js';
import type { ICheckFailure } from '../review/checks';

/**
 * The request data of `jupyter_copilot.notebook.run-cell.invoke`, sent once
 * the person allowed the run card.
 */
export interface IRunRequest {
  callId: string;
  artifactId: string;
  path: string;
  cellId: string;
  expectedSourceHash: string;
}

/**
 * What the checks need to know of the cell, read from the live model.
 */
export interface IRunCellFacts {
  /** `code`, `markdown` or `raw`. */
  cellType: string;
  /** The cell's whole metadata, as it is. */
  metadata: unknown;
  /** The complete current source. */
  source: string;
}

/**
 * Read a run request's data; `null` when a field is missing or of the wrong
 * type (the server validated it already, so this is a defence only).
 */
export function parseRun(data: Record<string, unknown>): IRunRequest | null {
  const strings = [
    'callId',
    'artifactId',
    'path',
    'cellId',
    'expectedSourceHash'
  ] as const;
  if (!strings.every(key => typeof data[key] === 'string' && data[key])) {
    return null;
  }
  return {
    callId: data.callId as string,
    artifactId: data.artifactId as string,
    path: data.path as string,
    cellId: data.cellId as string,
    expectedSourceHash: data.expectedSourceHash as string
  };
}

/**
 * Whether a cell's metadata marks it never to be run by an agent:
 * `{"jupyter_copilot": {"agent_run": false}}`.
 */
export function runLocked(metadata: unknown): boolean {
  const [namespace, key] = RUN_MARK_KEYS;
  const mark = Private.isObject(metadata) ? metadata[namespace] : undefined;
  return Private.isObject(mark) && mark[key] === false;
}

/**
 * The page's checks of a run, in the contract's order (section 11.2, steps
 * 3, 6 and 7 as the page sees them): the first failure, or `null` when the
 * cell may run now.
 *
 * @param request - The run request.
 * @param path - The active notebook's path.
 * @param cell - The facts of the cell with `request.cellId`, `null` if none.
 */
export function checkRun(
  request: IRunRequest,
  path: string,
  cell: IRunCellFacts | null
): ICheckFailure | null {
  if (path !== request.path) {
    return Private.fail('artifact-mismatch');
  }
  if (!cell) {
    return Private.fail('cell-not-found');
  }
  if (runLocked(cell.metadata)) {
    return Private.failure(
      'cell-locked',
      'The person marked this cell never to be run by an agent.'
    );
  }
  if (cell.cellType !== 'code') {
    return Private.failure('cell-type-mismatch', 'Only code cells can run.');
  }
  if (sourceHash(cell.source) !== request.expectedSourceHash) {
    return Private.failure(
      'stale-source',
      'The cell changed since the agent read it; it did not run. Read it again first.'
    );
  }
  return null;
}

/**
 * How a run ended, from JupyterLab's `executed` signal for the cell:
 * `ok` when it succeeded, `error` when the kernel reported an exception (an
 * error with a name), `aborted` when it never ran to the end (no signal, a
 * cancelled or aborted request, a kernel restart).
 *
 * @param executed - The signal's `success` and `error`, or `null` when no
 *   signal came for the cell.
 */
export function runEnding(
  executed: { success: boolean; error?: unknown } | null
): RunEnding {
  if (!executed) {
    return 'aborted';
  }
  if (executed.success) {
    return 'ok';
  }
  const error = executed.error;
  const name = Private.isObject(error) ? error.errorName : undefined;
  return typeof name === 'string' && name ? 'error' : 'aborted';
}

/**
 * The short form of a source hash shown on a run card: its first 8 hex
 * digits, e.g. `sha256:1a2b3c4d`.
 */
export function shortHash(hash: string): string {
  const match = /^sha256:([0-9a-f]{8})[0-9a-f]*$/.exec(hash);
  return match ? `sha256:${match[1]}` : hash.slice(0, 15);
}

namespace Private {
  export function isObject(value: unknown): value is Record<string, unknown> {
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  }

  /**
   * A refusal in words of its own, for the agent (the page never shows it).
   */
  export function failure(
    code: ICheckFailure['code'],
    message: string
  ): ICheckFailure {
    return { code, message };
  }

  export function fail(
    code: 'artifact-mismatch' | 'cell-not-found'
  ): ICheckFailure {
    return { code, message: REFUSAL_TEXT[code] };
  }
}

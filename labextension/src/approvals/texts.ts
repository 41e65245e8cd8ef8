// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import { PathExt } from '@jupyterlab/coreutils';
import type { TranslationBundle } from '@jupyterlab/translation';
import type { INotebookTracker } from '@jupyterlab/notebook';

import type { Tool } from '../generated/vocabulary';
import { TOOL_TITLES } from '../generated/vocabulary.js';
import type { IApproval } from '../protocol';
import { formatBytes } from '../format';
import { cellPosition } from '../reveal';

/**
 * The words of an approval card. They come from the request's metadata
 * and the open notebooks only; a request carries no source.
 */
export namespace ApprovalTexts {
  /**
   * What the tool would do.
   */
  export function operation(
    request: IApproval,
    trans: TranslationBundle
  ): string {
    if (request.toolName === ('notebook_edit_cell' satisfies Tool)) {
      return trans.__('Whole-cell diff, reviewed before anything changes');
    }
    if (request.kind === 'run') {
      return trans.__(
        "Run this cell in the notebook's kernel, as Shift+Enter would"
      );
    }
    return request.description || request.kind;
  }

  /**
   * The card's title for a tool: the title of our own tool's spec
   * ("Propose a new cell"), else the agent's title cut to one line.
   *
   * @param toolName - The request's `toolName`.
   */
  export function toolLabel(toolName: string): string {
    return (
      (TOOL_TITLES as Partial<Record<string, string>>)[toolName] ??
      toolTitle(toolName)
    );
  }

  /**
   * Where a proposed new cell would go, from the tool's `afterCellId` (the
   * card's `details.cellId`): "After cell 3 of 12 in analysis.ipynb", "At
   * the top of analysis.ipynb", or "A new cell in analysis.ipynb" when the
   * notebook is not open here or has no such cell; "" without a path.
   *
   * @param afterCellId - The cell the new one follows; none: at the top.
   */
  export function insertTarget(
    notebooks: INotebookTracker,
    path: string,
    afterCellId: string | undefined,
    trans: TranslationBundle
  ): string {
    if (!path) {
      return '';
    }
    const name = PathExt.basename(path);
    if (!afterCellId) {
      return trans.__('At the top of %1', name);
    }
    const at = cellPosition(notebooks, path, afterCellId);
    return at
      ? trans.__('After cell %1 of %2 in %3', at.index + 1, at.count, name)
      : trans.__('A new cell in %1', name);
  }

  /**
   * "Cell 4 of 12 in analysis.ipynb" when the notebook is open here and has
   * the cell, else "A cell in analysis.ipynb": the file name only, never the
   * directory; "" without a path.
   *
   * @param notebooks - The open notebooks.
   * @param path - The notebook's path, as the `approval` message gives it.
   * @param cellId - The target cell, when the request names one.
   */
  export function target(
    notebooks: INotebookTracker,
    path: string,
    cellId: string | undefined,
    trans: TranslationBundle
  ): string {
    if (!path) {
      return '';
    }
    const name = PathExt.basename(path);
    const at = cellId ? cellPosition(notebooks, path, cellId) : null;
    return at
      ? trans.__('Cell %1 of %2 in %3', at.index + 1, at.count, name)
      : trans.__('A cell in %1', name);
  }

  /**
   * Where a shell command runs: "in data/raw", or "in the server's folder"
   * for the server's root.
   *
   * @param folder - The server-relative folder of the request's details.
   */
  export function folder(folder: string, trans: TranslationBundle): string {
    return folder
      ? trans.__('in %1', folder)
      : trans.__("in the server's folder");
  }

  /**
   * The program a shell command runs: "Runs /usr/bin/ls"; "" when the
   * request names none.
   *
   * @param program - The absolute path of the request's details.
   */
  export function program(program: string, trans: TranslationBundle): string {
    return program ? trans.__('Runs %1', program) : '';
  }

  /**
   * What became of the environment variables an agent asked for: they are
   * not used, so that none changes what runs unseen; "" for none.
   *
   * @param names - The variables' names, from the request's details.
   */
  export function ignoredEnv(
    names: readonly string[],
    trans: TranslationBundle
  ): string {
    return names.length
      ? trans.__(
          "Not used: the environment variables the agent set (%1). The command runs with the server's own.",
          names.join(', ')
        )
      : '';
  }

  /**
   * A tool name or an agent's tool call title cut to one short line; the
   * card gives the whole title as a tooltip. Only visible spaces and line
   * breaks are folded: a hidden character stays, for the card to show.
   *
   * @param name - The request's `toolName`.
   * @param max - The most characters shown, the ellipsis included.
   */
  export function toolTitle(name: string, max = 80): string {
    const line = Private.strip(name.replace(Private.SPACES, ' '));
    const chars = Array.from(line);
    return chars.length <= max
      ? line
      : `${Private.strip(chars.slice(0, max - 1).join(''))}…`;
  }

  /**
   * A run card's line about the source: that it runs what the agent read,
   * or, when the cell no longer holds it, that it will not run; "" for
   * other cards or when the cell is not open here. Hashes are for machines:
   * the line never shows one.
   *
   * @param expected - The hash the agent read (`details.expectedSourceHash`).
   * @param current - The hash of the cell's source now, `null` if unknown.
   * @param locked - Whether the cell is marked never to be run by an agent.
   * @param seen - Whether the card showed the cell unchanged before: a
   *   change then happened while the card waited.
   */
  export function runSource(
    expected: string | undefined,
    current: string | null,
    trans: TranslationBundle,
    locked = false,
    seen = false
  ): string {
    if (!expected) {
      return '';
    }
    if (locked) {
      return trans.__(
        'This cell is marked never to be run by an agent: it will not run.'
      );
    }
    if (current === null || current === expected) {
      return trans.__('Runs the cell as the agent read it');
    }
    return seen
      ? trans.__(
          'The cell changed while this card waited: Allow once will not run it. Undo your change, or Deny and ask the agent again.'
        )
      : trans.__(
          'The cell changed since the agent read it: it will not run. Deny and ask the agent again.'
        );
  }

  /**
   * The hint under an edit card: the keys that decide it and the review
   * that follows. "" when no keys are bound.
   *
   * @param keys - The keys of Keep, Undo and next review, e.g. "Alt+Shift+Enter".
   */
  export function editHint(
    keys: { keep: string; undo: string; next: string },
    trans: TranslationBundle
  ): string {
    return keys.keep && keys.undo
      ? trans.__(
          'Escape denies. After Allow once the change opens in its cell: %1 keeps it, %2 undoes it, %3 goes to the next one.',
          keys.keep,
          keys.undo,
          keys.next || '—'
        )
      : trans.__('Escape denies.');
  }

  /**
   * "384 bytes proposed", or "" when the request gives no size.
   */
  export function size(request: IApproval, trans: TranslationBundle): string {
    const bytes = request.details.newSourceBytes;
    return bytes === undefined
      ? ''
      : trans.__('%1 proposed', formatBytes(bytes, trans));
  }

  /**
   * Whether a refused decision ends the card (the person can never decide
   * it), and the words why.
   *
   * @param code - The refusal code of `POST copilot/api/approvals/<id>`.
   * @param message - The server's own words, used for other codes.
   */
  export function refusal(
    code: string,
    message: string,
    trans: TranslationBundle
  ): { ended: boolean; text: string } {
    switch (code) {
      case 'aborted':
        return {
          ended: true,
          text: trans.__('This request has already ended.')
        };
      case 'denied':
        return {
          ended: true,
          text: trans.__(
            'Only the person whose tool call this is can decide it.'
          )
        };
      default:
        return {
          ended: false,
          text:
            message ||
            trans.__('The Copilot server did not accept the decision.')
        };
    }
  }

  /**
   * The words for a decision that did not reach the server or its answer.
   *
   * @param network - Whether the server could not be reached at all.
   */
  export function failure(network: boolean, trans: TranslationBundle): string {
    return network
      ? trans.__('The Copilot server could not be reached. Try again.')
      : trans.__('The Copilot server could not take the decision. Try again.');
  }
}

namespace Private {
  /**
   * Runs of visible white space and line breaks. Not `\s`, which also
   * matches U+FEFF, a hidden character that must stay to be shown.
   */
  export const SPACES =
    /[\t\n\r \u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]+/g;

  /**
   * A folded line without a space at either end (`trim` would also take a
   * U+FEFF away).
   */
  export function strip(line: string): string {
    return line.replace(/^ | $/g, '');
  }
}

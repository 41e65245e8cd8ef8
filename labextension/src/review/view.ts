// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import type { Extension } from '@codemirror/state';
import { EditorView } from '@codemirror/view';
import type { TranslationBundle } from '@jupyterlab/translation';
import { ISignal, Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';

import { element, styledButton } from '../dom';
import { Visible } from '../visible';
import {
  createDiff,
  hunkDecisions,
  lockHunks,
  releaseDiff,
  showHidden
} from './diff';
import {
  chosenSource,
  endingChange,
  hunkCounts,
  withFinalBreak
} from './hunks';
import { plainSource } from './source';

/**
 * The review of one proposed whole-cell edit, shown inside the cell below
 * its input: a label, a read-only unified diff of the current source
 * against the proposed one, Keep and Undo, and a status line. A proposed
 * new cell (`operation: 'insert'`) is the same review of an empty source
 * against the new one, marked as a pending cell and shown below the cell it
 * is to follow (or above the notebook's cells).
 *
 * Hidden characters (direction controls, zero-width and control
 * characters) show as escapes in the diff and in a new cell's source, and
 * `.jp-Copilot-HiddenNotice` says so in words.
 *
 * The view never touches the cell; the review manager decides what Keep
 * and Undo do. This module is loaded on first use, in its own chunk, with
 * the merge view it needs.
 */
export class ReviewView extends Widget {
  /**
   * Create the review of one proposal.
   */
  constructor(options: ReviewView.IOptions) {
    super();
    const trans = (this._trans = options.trans);
    const words = Private.words(options, trans);
    this.addClass('jp-Copilot-Review');
    const node = this.node;
    node.dataset.callId = options.callId;
    node.dataset.operation = options.operation ?? 'edit';
    if (options.operation === 'insert') {
      this.addClass('jp-Copilot-PendingCell');
      node.dataset.afterCellId = options.cellId ?? '';
      node.dataset.cellType = options.cellType ?? 'code';
    } else {
      node.dataset.cellId = options.cellId ?? '';
    }
    node.setAttribute('role', 'region');
    node.setAttribute('aria-label', words.region);
    // Keys typed in the review are the review's: no notebook shortcuts.
    node.setAttribute('data-lm-suppress-shortcuts', 'true');
    node.addEventListener('mousedown', Private.stop);
    node.addEventListener('dblclick', Private.stop);

    const bar = element('div', 'jp-Copilot-ReviewBar');
    const label = element('span', 'jp-Copilot-ReviewLabel', words.label);
    this._keep = styledButton(
      'jp-Copilot-ReviewKeep jp-mod-accept',
      trans.__('Keep')
    );
    this._keep.title = words.keep;
    this._undo = styledButton(
      'jp-Copilot-ReviewUndo jp-mod-reject',
      trans.__('Undo')
    );
    this._undo.title = words.undo;
    this._keep.addEventListener('click', this._onKeep);
    this._undo.addEventListener('click', this._onUndo);
    // How many parts were kept and dropped, while some can be.
    this._summary = element('span', 'jp-Copilot-ReviewSummary');
    this._summary.setAttribute('aria-live', 'polite');
    this._summary.hidden = true;
    bar.append(label, this._summary, this._keep, this._undo);

    this._diff = element('div', 'jp-Copilot-ReviewDiff');
    this._diff.setAttribute(
      'aria-label',
      options.operation === 'insert'
        ? trans.__('Proposed source, read-only')
        : trans.__('Differences, read-only')
    );
    this._message = element('div', 'jp-Copilot-ReviewMessage');
    this._message.setAttribute('role', 'status');
    this._message.setAttribute('aria-live', 'polite');
    // Hidden characters show as escapes in the diff, and the review says so.
    const titles = (this._titles = Visible.titles(trans));
    const hidden = Visible.reviewNotice(
      [options.original, options.proposed],
      trans,
      titles
    );
    // A change of the final line break alone shows nowhere in the diff.
    const ending =
      options.operation === 'insert'
        ? null
        : endingChange(options.original, options.proposed);
    const endingNote = ending
      ? element(
          'div',
          'jp-Copilot-ReviewEnding',
          ending === 'added'
            ? trans.__('Keep also adds a line break at the end of the cell.')
            : trans.__(
                'Keep also removes the line break at the end of the cell.'
              )
        )
      : null;
    node.append(
      bar,
      ...(hidden ? [hidden] : []),
      this._diff,
      ...(endingNote ? [endingNote] : []),
      this._message
    );

    if (options.operation === 'insert') {
      // All of a new cell is new: its source as it will be, no diff editor.
      const content = options.content ?? plainSource(options.proposed);
      Visible.markIn(content, titles);
      this._diff.append(content);
    } else {
      this._editor = this._createDiff(options);
    }
    this.setState('open');
  }

  /**
   * Emitted when the person presses Keep.
   */
  get keepRequested(): ISignal<this, void> {
    return this._keepRequested;
  }

  /**
   * Emitted when the person presses Undo (or Dismiss, after a conflict).
   */
  get undoRequested(): ISignal<this, void> {
    return this._undoRequested;
  }

  /**
   * The review's state, mirrored in `data-state`.
   */
  get state(): ReviewView.State {
    return this._state;
  }

  /**
   * What Keep applies when the person dropped hunks: the proposal with the
   * dropped hunks as the cell has them; `null` when no hunk was dropped
   * (Keep then applies the proposal exactly as it came).
   */
  chosen(): string | null {
    if (!this._editor || !this._byHunk) {
      return null;
    }
    const { hunks, decisions } = hunkDecisions(this._editor);
    return chosenSource(this._original, this._proposed, hunks, decisions);
  }

  /**
   * Whether keyboard focus is inside the review.
   */
  get hasFocus(): boolean {
    return this.node.contains(document.activeElement);
  }

  /**
   * Show a state and its status line.
   *
   * @param state - `open`: Keep and Undo work; `keeping`: waiting for the
   *   server, both inert; `refused`: Keep disabled, Undo works;
   *   `conflict`: the diff is gone and Undo becomes Dismiss.
   * @param message - The status line; empty hides it.
   */
  setState(state: ReviewView.State, message = ''): void {
    const hadKeepFocus = document.activeElement === this._keep;
    this._state = state;
    this.node.dataset.state = state;
    // While keeping, the buttons stay focusable but inert, so that the focus
    // stays where the person left it.
    this._keep.disabled = state === 'refused' || state === 'conflict';
    this._keep.setAttribute('aria-disabled', String(state !== 'open'));
    this._keep.hidden = state === 'conflict';
    this._undo.setAttribute('aria-disabled', String(state === 'keeping'));
    this._undo.textContent =
      state === 'conflict' ? this._trans.__('Dismiss') : this._trans.__('Undo');
    this._diff.hidden = state === 'conflict';
    // Once Keep is refused or under way, the choice of hunks is fixed too.
    lockHunks(this._diff, state !== 'open');
    this._message.textContent = message;
    this._message.hidden = !message;
    if (hadKeepFocus && this._keep.disabled) {
      // A disabled button drops focus; keep it in the review.
      this._undo.focus();
    }
  }

  /**
   * Destroy the diff editor and disconnect every listener.
   */
  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    if (this._editor) {
      releaseDiff(this._editor);
      this._editor = null;
    }
    this._keep.removeEventListener('click', this._onKeep);
    this._undo.removeEventListener('click', this._onUndo);
    this.node.removeEventListener('mousedown', Private.stop);
    this.node.removeEventListener('dblclick', Private.stop);
    super.dispose();
    Signal.clearData(this);
  }

  /**
   * Press Keep, as the button does: only while the review is open.
   *
   * @returns Whether Keep was pressed.
   */
  requestKeep(): boolean {
    if (this._state !== 'open') {
      return false;
    }
    this._keepRequested.emit();
    return true;
  }

  /**
   * Press Undo (Dismiss after a conflict), as the button does: not while
   * the server is asked about a Keep.
   *
   * @returns Whether Undo was pressed.
   */
  requestUndo(): boolean {
    if (this._state === 'keeping') {
      return false;
    }
    this._undoRequested.emit();
    return true;
  }

  /**
   * Mark the review as the one the keyboard commands act on, or unmark it.
   */
  setCurrent(current: boolean): void {
    this.toggleClass('jp-mod-current', current);
  }

  /**
   * The diff of an edit, in `_diff`.
   */
  private _createDiff(options: ReviewView.IOptions): EditorView {
    const trans = this._trans;
    // Hunks can be decided one by one in an edit whose lines all end in
    // "\n"; what Keep applies after a drop is then exactly the proposal
    // with the dropped hunks as the cell has them (hunks.ts).
    const byHunk = (this._byHunk =
      !options.original.includes('\r') && !options.proposed.includes('\r'));
    this._original = options.original;
    this._proposed = options.proposed;
    // Compared with a final line break each, so that the last line never
    // shows as removed and added the same (hunks.ts).
    const editor = createDiff(
      this._diff,
      byHunk ? withFinalBreak(options.original) : options.original,
      byHunk ? withFinalBreak(options.proposed) : options.proposed,
      [...(options.extensions ?? []), showHidden(this._titles)],
      byHunk
        ? {
            keep: trans.__('Keep change'),
            drop: trans.__('Drop change'),
            keepTitle: trans.__('Keep this change when you press Keep'),
            dropTitle: trans.__(
              'Leave this part of the cell as it is when you press Keep'
            ),
            kept: trans.__('Kept'),
            dropped: trans.__('Dropped: stays as it is'),
            undoKeep: trans.__('Undo keep'),
            undoDrop: trans.__('Undo drop'),
            undoTitle: trans.__(
              'Decide this change again; until you do, Keep applies it'
            ),
            isLocked: () => this._state !== 'open',
            onDecide: () => this._renderSummary()
          }
        : null
    );
    this._editor = editor;
    if (byHunk) {
      this._renderSummary();
    }
    return editor;
  }

  /**
   * Show how many parts were kept and dropped, and how many are left, on
   * the review's bar.
   */
  private _renderSummary(): void {
    if (!this._editor) {
      return;
    }
    const trans = this._trans;
    const { hunks, decisions } = hunkDecisions(this._editor);
    const { kept, dropped, open } = hunkCounts(hunks, decisions);
    const words: string[] = [];
    if (kept + dropped === 0) {
      words.push(trans._n('%1 change', '%1 changes', open));
    } else {
      if (kept) {
        words.push(trans.__('%1 kept', kept));
      }
      if (dropped) {
        words.push(trans.__('%1 dropped', dropped));
      }
      if (open) {
        words.push(trans.__('%1 to decide', open));
      }
    }
    this._summary.textContent = words.join(', ');
    this._summary.title = trans.__(
      'Keep applies the changes kept and those still to decide; a dropped change leaves its part of the cell as it is.'
    );
    this._summary.hidden = hunks.length === 0;
    const d = this.node.dataset;
    d.kept = String(kept);
    d.dropped = String(dropped);
  }

  private _onKeep = (): void => {
    this.requestKeep();
  };

  private _onUndo = (): void => {
    this.requestUndo();
  };

  private _trans: TranslationBundle;
  private _titles: Visible.Titles;
  private _state: ReviewView.State = 'open';
  private _keep: HTMLButtonElement;
  private _undo: HTMLButtonElement;
  private _diff: HTMLElement;
  private _message: HTMLElement;
  private _summary: HTMLElement;
  private _editor: EditorView | null = null;
  private _byHunk = false;
  private _original = '';
  private _proposed = '';
  private _keepRequested = new Signal<this, void>(this);
  private _undoRequested = new Signal<this, void>(this);
}

/**
 * The types of the review view.
 */
export namespace ReviewView {
  /**
   * The options of a review view.
   */
  export interface IOptions {
    /** The tool call that proposed the edit. */
    callId: string;
    /** What is proposed: a new source for a cell (default) or a new cell. */
    operation?: 'edit' | 'insert';
    /**
     * The id of the cell under review; for an insert, of the cell the new
     * one is to follow (`null`: at the top).
     */
    cellId: string | null;
    /** For an insert: the new cell's type. */
    cellType?: string;
    /** The cell's current source; empty for an insert. */
    original: string;
    /** The proposed source. */
    proposed: string;
    /** For an edit: more editor extensions, e.g. the cell's language. */
    extensions?: Extension[];
    /**
     * For an insert: the proposed source as shown, e.g. highlighted in the
     * cell's language; plain text of `proposed` when not given.
     */
    content?: HTMLElement;
    /** The words of the review, in the person's language. */
    trans: TranslationBundle;
  }

  /**
   * The states of a review (`data-state`).
   */
  export type State = 'open' | 'keeping' | 'refused' | 'conflict';
}

namespace Private {
  /**
   * The words of a review's label, region and buttons.
   */
  export function words(
    options: ReviewView.IOptions,
    trans: TranslationBundle
  ): { region: string; label: string; keep: string; undo: string } {
    if (options.operation !== 'insert') {
      return {
        region: trans.__('Edit proposed by a Copilot tool'),
        label: trans.__('Proposed by a Copilot tool'),
        keep: trans.__('Replace the cell source with the proposal'),
        undo: trans.__('Discard the proposal and leave the cell as it is')
      };
    }
    const label =
      options.cellType === 'markdown'
        ? trans.__('New Markdown cell proposed by a Copilot tool')
        : options.cellType === 'raw'
          ? trans.__('New raw cell proposed by a Copilot tool')
          : trans.__('New code cell proposed by a Copilot tool');
    return {
      region: label,
      label,
      keep: options.cellId
        ? trans.__('Insert this cell below the cell above')
        : trans.__('Insert this cell at the top of the notebook'),
      undo: trans.__('Discard the proposed cell; the notebook stays as it is')
    };
  }

  /**
   * Keep a pointer event to the review: the notebook would otherwise start
   * a cell drag or selection, or move the focus away from the buttons.
   */
  export function stop(event: Event): void {
    event.stopPropagation();
  }
}

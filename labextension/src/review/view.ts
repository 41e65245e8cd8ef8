// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import type { Extension } from '@codemirror/state';
import type { EditorView } from '@codemirror/view';
import type { TranslationBundle } from '@jupyterlab/translation';
import { ISignal, Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';

import { element } from '../dom';
import { createDiff } from './diff';

/**
 * The review of one proposed whole-cell edit, shown inside the cell below
 * its input: a label, a read-only unified diff of the current source
 * against the proposed one, Keep and Undo, and a status line.
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
    this.addClass('jp-Copilot-Review');
    const node = this.node;
    node.dataset.callId = options.callId;
    node.dataset.cellId = options.cellId;
    node.setAttribute('role', 'region');
    node.setAttribute(
      'aria-label',
      trans.__('Edit proposed by a Copilot tool')
    );
    // Keys typed in the review are the review's: no notebook shortcuts.
    node.setAttribute('data-lm-suppress-shortcuts', 'true');
    node.addEventListener('mousedown', Private.stop);
    node.addEventListener('dblclick', Private.stop);

    const bar = element('div', 'jp-Copilot-ReviewBar');
    const label = element(
      'span',
      'jp-Copilot-ReviewLabel',
      trans.__('Proposed by a Copilot tool')
    );
    this._keep = Private.button(
      'jp-Copilot-ReviewKeep jp-mod-accept',
      trans.__('Keep')
    );
    this._keep.title = trans.__('Replace the cell source with the proposal');
    this._undo = Private.button(
      'jp-Copilot-ReviewUndo jp-mod-reject',
      trans.__('Undo')
    );
    this._undo.title = trans.__(
      'Discard the proposal and leave the cell as it is'
    );
    this._keep.addEventListener('click', this._onKeep);
    this._undo.addEventListener('click', this._onUndo);
    bar.append(label, this._keep, this._undo);

    this._diff = element('div', 'jp-Copilot-ReviewDiff');
    this._diff.setAttribute('aria-label', trans.__('Differences, read-only'));
    this._message = element('div', 'jp-Copilot-ReviewMessage');
    this._message.setAttribute('role', 'status');
    this._message.setAttribute('aria-live', 'polite');
    node.append(bar, this._diff, this._message);

    this._editor = createDiff(
      this._diff,
      options.original,
      options.proposed,
      options.extensions
    );
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
    this._editor.destroy();
    this._keep.removeEventListener('click', this._onKeep);
    this._undo.removeEventListener('click', this._onUndo);
    this.node.removeEventListener('mousedown', Private.stop);
    this.node.removeEventListener('dblclick', Private.stop);
    super.dispose();
    Signal.clearData(this);
  }

  private _onKeep = (): void => {
    if (this._state === 'open') {
      this._keepRequested.emit();
    }
  };

  private _onUndo = (): void => {
    if (this._state !== 'keeping') {
      this._undoRequested.emit();
    }
  };

  private _trans: TranslationBundle;
  private _state: ReviewView.State = 'open';
  private _keep: HTMLButtonElement;
  private _undo: HTMLButtonElement;
  private _diff: HTMLElement;
  private _message: HTMLElement;
  private _editor: EditorView;
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
    /** The id of the cell under review. */
    cellId: string;
    /** The cell's current source. */
    original: string;
    /** The proposed source. */
    proposed: string;
    /** More editor extensions, e.g. the cell's language for highlighting. */
    extensions?: Extension[];
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
   * Create a styled `<button>` of type button.
   */
  export function button(className: string, text: string): HTMLButtonElement {
    const node = element(
      'button',
      `jp-mod-styled ${className}`,
      text
    ) as HTMLButtonElement;
    node.type = 'button';
    return node;
  }

  /**
   * Keep a pointer event to the review: the notebook would otherwise start
   * a cell drag or selection, or move the focus away from the buttons.
   */
  export function stop(event: Event): void {
    event.stopPropagation();
  }
}

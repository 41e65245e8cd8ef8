// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import type { TranslationBundle } from '@jupyterlab/translation';
import type { Extension } from '@codemirror/state';
import type { EditorView } from '@codemirror/view';
import { Message } from '@lumino/messaging';
import { ISignal, Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';

import { element, styledButton } from '../dom';
import { HiddenChars } from '../hiddenchars';
import { copilotIcon } from '../icons';
import type { IFileReview } from '../protocol';
import { createDiff, releaseDiff, showHidden } from '../review/diff';
import { Visible } from '../visible';
import { FileReviewTexts } from './texts';

/**
 * The review of a file an agent proposes to write, as a main-area tab:
 * who proposes what, Keep and Undo, a status line and a read-only unified
 * diff of the file's text against the proposal.
 *
 * The DOM, with the hooks browser tests use:
 * `.jp-Copilot-FileReview[data-review-id][data-state][data-change]`
 * (`data-change` is `create` or `change`) holding
 * `.jp-Copilot-FileReviewBar` with the header
 * `.jp-Copilot-FileReviewHeader` (`.jp-Copilot-FileReviewAgent` and
 * `code.jp-Copilot-FileReviewPath`) and the buttons
 * `.jp-Copilot-FileReviewKeep` and `.jp-Copilot-FileReviewUndo`; then the
 * status line `.jp-Copilot-FileReviewMessage` (role status) and the diff
 * `.jp-Copilot-FileReviewDiff`. When the texts hold hidden characters
 * (direction controls, zero-width and control characters), the diff and the
 * path show them as escapes and `.jp-Copilot-HiddenNotice` says so.
 *
 * The view writes nothing; a {@link FileReview} decides what Keep and Undo
 * do. This module is loaded on first use, in its own chunk, with the merge
 * view it needs.
 */
export class FileReviewView extends Widget {
  /**
   * Create the view of one proposal.
   */
  constructor(options: FileReviewView.IOptions) {
    super();
    const { review } = options;
    const trans = (this._trans = options.trans);
    this.id = `jp-Copilot-FileReview-${Private.next++}`;
    this.addClass('jp-Copilot-FileReview');
    // A tab title and a tooltip cannot be styled: escapes as plain text.
    this.title.label = HiddenChars.escaped(
      FileReviewTexts.title(review.path, trans)
    );
    this.title.caption = HiddenChars.escaped(review.path);
    this.title.icon = copilotIcon;
    this.title.closable = true;
    const node = this.node;
    node.dataset.reviewId = review.reviewId;
    node.dataset.change = review.original === null ? 'create' : 'change';
    node.setAttribute('role', 'region');
    node.setAttribute(
      'aria-label',
      trans.__('Review of %1', HiddenChars.escaped(review.path))
    );
    // Focusable by script only, to take the focus when the tab opens.
    node.tabIndex = -1;

    const words = FileReviewTexts.header(review, trans);
    const titles = Visible.titles(trans);
    const header = element('div', 'jp-Copilot-FileReviewHeader');
    const agent = element('span', 'jp-Copilot-FileReviewAgent');
    const path = element('code', 'jp-Copilot-FileReviewPath');
    Visible.setText(agent, words.agent, titles);
    Visible.setText(path, words.path, titles);
    header.append(agent, ` ${words.verb} `, path);
    this._keep = styledButton(
      'jp-Copilot-FileReviewKeep jp-mod-accept',
      trans.__('Keep')
    );
    this._keep.title = trans.__('Write the proposal to the file');
    this._undo = styledButton(
      'jp-Copilot-FileReviewUndo jp-mod-reject',
      trans.__('Undo')
    );
    this._keep.addEventListener('click', this._onKeep);
    this._undo.addEventListener('click', this._onUndo);
    const bar = element('div', 'jp-Copilot-FileReviewBar');
    bar.append(header, this._keep, this._undo);

    this._message = element('div', 'jp-Copilot-FileReviewMessage');
    this._message.setAttribute('role', 'status');
    this._message.setAttribute('aria-live', 'polite');
    this._diff = element('div', 'jp-Copilot-FileReviewDiff');
    this._diff.setAttribute('aria-label', trans.__('Differences, read-only'));
    // Hidden characters show as escapes in the diff, and the review says so.
    const hidden = Visible.reviewNotice(
      [review.original ?? '', review.proposed],
      trans,
      titles
    );
    node.append(bar, ...(hidden ? [hidden] : []), this._message, this._diff);

    this._editor = createDiff(
      this._diff,
      review.original ?? '',
      review.proposed,
      [...(options.extensions ?? []), showHidden(titles)]
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
   * Emitted when the person presses Undo, or Dismiss once the review is over.
   */
  get undoRequested(): ISignal<this, void> {
    return this._undoRequested;
  }

  /**
   * The review's state, mirrored in `data-state`.
   */
  get state(): FileReviewView.State {
    return this._state;
  }

  /**
   * Show a state and its status line.
   *
   * @param state - `open`: Keep and Undo work; `keeping` and `undoing`:
   *   waiting for the server, both inert; `refused`: Keep disabled, Undo
   *   works; `written` and `ended`: the review is over, Keep is disabled and
   *   Undo becomes Dismiss.
   * @param message - The status line; empty hides it.
   */
  setState(state: FileReviewView.State, message = ''): void {
    const hadKeepFocus = document.activeElement === this._keep;
    const over = state === 'written' || state === 'ended';
    const busy = state === 'keeping' || state === 'undoing';
    this._state = state;
    this.node.dataset.state = state;
    this.node.setAttribute('aria-busy', String(busy));
    // While waiting, the buttons stay focusable but inert, so that the focus
    // stays where the person left it.
    this._keep.disabled = over || state === 'refused';
    this._keep.setAttribute('aria-disabled', String(state !== 'open'));
    this._undo.setAttribute('aria-disabled', String(busy));
    const trans = this._trans;
    this._undo.textContent = over ? trans.__('Dismiss') : trans.__('Undo');
    this._undo.title = over
      ? trans.__('Close this review')
      : trans.__('Discard the proposal and leave the file as it is');
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
    releaseDiff(this._editor);
    this._keep.removeEventListener('click', this._onKeep);
    this._undo.removeEventListener('click', this._onUndo);
    super.dispose();
    Signal.clearData(this);
  }

  /**
   * Closing the tab disposes the review; its {@link FileReview} treats an
   * undecided review as undone.
   */
  protected onCloseRequest(msg: Message): void {
    super.onCloseRequest(msg);
    this.dispose();
  }

  /**
   * Take the keyboard focus, on the review itself and not on Keep: a key
   * meant for the notebook must never write the file.
   */
  protected onActivateRequest(msg: Message): void {
    super.onActivateRequest(msg);
    if (!this.node.contains(document.activeElement)) {
      this.node.focus();
    }
  }

  private _trans: TranslationBundle;
  private _onKeep = (): void => {
    if (this._state === 'open') {
      this._keepRequested.emit();
    }
  };

  private _onUndo = (): void => {
    if (this._state !== 'keeping' && this._state !== 'undoing') {
      this._undoRequested.emit();
    }
  };

  private _state: FileReviewView.State = 'open';
  private _keep: HTMLButtonElement;
  private _undo: HTMLButtonElement;
  private _diff: HTMLElement;
  private _message: HTMLElement;
  private _editor: EditorView;
  private _keepRequested = new Signal<this, void>(this);
  private _undoRequested = new Signal<this, void>(this);
}

/**
 * The types of the file review view.
 */
export namespace FileReviewView {
  /**
   * The options of a file review view.
   */
  export interface IOptions {
    /** The proposal, as the `file-review` message gave it. */
    review: IFileReview;
    /** More editor extensions, e.g. the file's language for highlighting. */
    extensions?: Extension[];
    /** The words of the review, in the person's language. */
    trans: TranslationBundle;
  }

  /**
   * The states of a file review (`data-state`).
   */
  export type State =
    'open' | 'keeping' | 'undoing' | 'refused' | 'written' | 'ended';
}

namespace Private {
  /**
   * A counter for unique widget ids: the review id is the server's, not a
   * DOM id.
   */
  // eslint-disable-next-line prefer-const -- reassigned as `Private.next`
  export let next = 0;
}

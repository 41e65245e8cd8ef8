// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import type { TranslationBundle } from '@jupyterlab/translation';
import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import { ClientCodes, CopilotApi, FileReviewDecision, Outcome } from '../api';
import type { FileReviewOutcome, IFileReview } from '../protocol';
import { FileReviewTexts } from './texts';
import type { FileReviewView } from './view';

/**
 * One open file review: what Keep and Undo do, and which state its view
 * shows.
 *
 * Only the server writes: Keep asks it to (`POST
 * copilot/api/file-reviews/<id>`), and it writes only if the file still
 * holds the text the proposal was made against. Closing the view without
 * deciding is Undo.
 */
export class FileReview implements IDisposable {
  /**
   * Take over a view of the review.
   */
  constructor(options: FileReview.IOptions) {
    this.review = options.review;
    this.view = options.view;
    this._api = options.api;
    this._trans = options.trans;
    this.view.keepRequested.connect(this._keep, this);
    this.view.undoRequested.connect(this._undo, this);
    this.view.disposed.connect(this._onViewDisposed, this);
  }

  /**
   * The proposal under review.
   */
  readonly review: IFileReview;

  /**
   * The review's view, a main-area tab.
   */
  readonly view: FileReviewView;

  /**
   * Emitted once, when the view is gone.
   */
  get closed(): ISignal<this, void> {
    return this._closed;
  }

  /**
   * Whether the review is disposed.
   */
  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /**
   * Show that the server ended the review (`file-review-ended`). A
   * decision this page is still sending is left to its own reply.
   *
   * @param decision - How the review ended.
   */
  end(decision: FileReviewOutcome): void {
    const state = this.view.state;
    if (
      this._isDisposed ||
      state === 'written' ||
      state === 'keeping' ||
      state === 'undoing'
    ) {
      return;
    }
    this.view.setState('ended', FileReviewTexts.ended(decision, this._trans));
  }

  /**
   * Close the view; an undecided review is undone.
   */
  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    window.clearTimeout(this._closeTimer);
    // Disposing the view calls back into `_onViewDisposed`, which undoes
    // the review if it is still open and emits `closed`.
    this.view.dispose();
    this._isDisposed = true;
    Signal.clearData(this);
  }

  private async _keep(): Promise<void> {
    this.view.setState('keeping');
    const reply = await this._send('keep');
    if (this.view.isDisposed || !reply) {
      return;
    }
    if (!reply.error) {
      this.view.setState('written', FileReviewTexts.written(this._trans));
      // Leave the word up for a moment, then go.
      this._closeTimer = window.setTimeout(
        () => this.dispose(),
        Private.WRITTEN_LINGER
      );
      return;
    }
    const refused = FileReviewTexts.refusal(
      reply.error.code,
      reply.error.message,
      this._trans
    );
    this.view.setState(refused.ended ? 'ended' : 'refused', refused.text);
  }

  private async _undo(): Promise<void> {
    const before = this.view.state;
    if (before === 'written' || before === 'ended') {
      // Dismiss: the review is over, so there is nothing to tell the server.
      this.dispose();
      return;
    }
    this.view.setState('undoing');
    const reply = await this._send('undo', before);
    if (!this.view.isDisposed && reply) {
      // Undone, or refused because the review is over either way.
      this.dispose();
    }
  }

  /**
   * Send a decision. When it does not reach the server or its answer, the
   * view goes back to `before` with the reason and `null` is returned.
   */
  private async _send(
    decision: FileReviewDecision,
    before: FileReviewView.State = 'open'
  ): Promise<Outcome<{ decision: FileReviewDecision }> | null> {
    const reply = await this._api.decideFileReview(
      this.review.reviewId,
      decision
    );
    if (!reply.error || !ClientCodes.isOwn(reply.error)) {
      return reply;
    }
    if (!this.view.isDisposed) {
      const network = reply.error.code === ClientCodes.UNREACHABLE;
      this.view.setState(before, FileReviewTexts.failure(network, this._trans));
    }
    return null;
  }

  private _onViewDisposed(): void {
    window.clearTimeout(this._closeTimer);
    const state = this.view.state;
    if (state === 'open' || state === 'refused') {
      // Closed without a decision: that is Undo. Nothing is left to show,
      // so the answer is not awaited.
      void this._api.decideFileReview(this.review.reviewId, 'undo');
    }
    this._closed.emit();
    this._isDisposed = true;
    Signal.clearData(this);
  }

  private _trans: TranslationBundle;
  private _api: CopilotApi;
  private _closeTimer = 0;
  private _isDisposed = false;
  private _closed = new Signal<this, void>(this);
}

/**
 * The types of a file review.
 */
export namespace FileReview {
  /**
   * The options of a file review.
   */
  export interface IOptions {
    /** The proposal. */
    review: IFileReview;
    /** Its view, already created. */
    view: FileReviewView;
    /** The client of the server's API. */
    api: CopilotApi;
    /** The words of the review, in the person's language. */
    trans: TranslationBundle;
  }
}

namespace Private {
  /**
   * How long "Written." stays up before the tab closes, in milliseconds.
   */
  export const WRITTEN_LINGER = 1000;
}

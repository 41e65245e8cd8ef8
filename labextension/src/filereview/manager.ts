// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import type { TranslationBundle } from '@jupyterlab/translation';
import type { JupyterFrontEnd } from '@jupyterlab/application';
import type { CopilotApi } from '../api';
import { IDisposable } from '@lumino/disposable';

import type { Bridge } from '../bridge';
import type { IFileReview, IFileReviewEnded } from '../protocol';
import { fileLanguageExtensions, ILanguages } from '../review/source';
import type { FileReview } from './review';
import type { FileReviewView } from './view';

/**
 * Opens a main-area tab for each file an agent proposes to write
 * (`file-review`) and shows how the server ended it (`file-review-ended`).
 * Several reviews may be open at once, one tab each; a review the server
 * sends again while its tab is open is not opened twice.
 *
 * The review's code and the merge view are loaded on the first proposal,
 * in their own chunk. Nothing is written until the person presses Keep.
 */
export class FileReviewManager implements IDisposable {
  /**
   * Create the manager and listen to the bridge's file review messages.
   */
  constructor(options: FileReviewManager.IOptions) {
    this._shell = options.shell;
    this._bridge = options.bridge;
    this._languages = options.languages ?? null;
    this._api = options.api;
    this._trans = options.trans;
    this._bridge.fileReviewRequested.connect(this._onRequested, this);
    this._bridge.fileReviewEnded.connect(this._onEnded, this);
  }

  /**
   * Whether the manager is disposed.
   */
  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /**
   * Stop listening and close every open review (which undoes the undecided).
   */
  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._bridge.fileReviewRequested.disconnect(this._onRequested, this);
    this._bridge.fileReviewEnded.disconnect(this._onEnded, this);
    this._opening.clear();
    [...this._reviews.values()].forEach(review => review.dispose());
    this._reviews.clear();
  }

  private async _onRequested(_: Bridge, review: IFileReview): Promise<void> {
    const id = review.reviewId;
    if (this._reviews.has(id) || this._opening.has(id)) {
      return;
    }
    this._opening.set(id, null);
    const [ui, extensions] = await Promise.all([
      Private.load(),
      fileLanguageExtensions(this._languages, review.path)
    ]);
    const endedMeanwhile = this._opening.get(id);
    const stillWanted = this._opening.delete(id) && !this._isDisposed;
    // Without its chunk the review cannot be shown, and nothing is ever
    // written without one; the server still holds it, and a later
    // `file-review` tries again.
    if (!ui || !stillWanted || endedMeanwhile) {
      return;
    }
    const trans = this._trans;
    const view = new ui.FileReviewView({ review, extensions, trans });
    const controller = new ui.FileReview({
      review,
      view,
      api: this._api,
      trans
    });
    this._reviews.set(id, controller);
    controller.closed.connect(() => this._reviews.delete(id));
    this._shell.add(view, 'main');
    this._shell.activateById(view.id);
  }

  private _onEnded(_: Bridge, ended: IFileReviewEnded): void {
    const id = ended.reviewId;
    if (this._opening.has(id)) {
      // It ended before its tab opened: never open it.
      this._opening.set(id, ended);
      return;
    }
    this._reviews.get(id)?.end(ended.decision);
  }

  private _shell: JupyterFrontEnd.IShell;
  private _bridge: Bridge;
  private _languages: ILanguages | null;
  private _trans: TranslationBundle;
  private _api: CopilotApi;
  private _reviews = new Map<string, FileReview>();
  /** The reviews whose tab is being prepared, with how they ended meanwhile. */
  private _opening = new Map<string, IFileReviewEnded | null>();
  private _isDisposed = false;
}

/**
 * The types of the file review manager.
 */
export namespace FileReviewManager {
  /**
   * The options of a file review manager.
   */
  export interface IOptions {
    /** The application shell, whose main area holds the review tabs. */
    shell: JupyterFrontEnd.IShell;
    /** The page bridge that carries `file-review` and `file-review-ended`. */
    bridge: Bridge;
    /** The editor languages, to highlight the file in the diff. */
    languages?: ILanguages | null;
    /** The client of the server's API. */
    api: CopilotApi;
    /** The words of the reviews, in the person's language. */
    trans: TranslationBundle;
  }
}

namespace Private {
  /**
   * The file review's classes, loaded on first use in their own chunk.
   */
  export interface IModule {
    FileReviewView: typeof FileReviewView;
    FileReview: typeof FileReview;
  }

  /**
   * Load the file review's chunk (the merge view included); `null` when it
   * cannot be loaded.
   */
  export async function load(): Promise<IModule | null> {
    try {
      const [view, review] = await Promise.all([
        import('./view'),
        import('./review')
      ]);
      return {
        FileReviewView: view.FileReviewView,
        FileReview: review.FileReview
      };
    } catch {
      return null;
    }
  }
}

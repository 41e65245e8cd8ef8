// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import type { TranslationBundle } from '@jupyterlab/translation';
import { JupyterFrontEnd } from '@jupyterlab/application';
import { Cell, ICellModel } from '@jupyterlab/cells';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { IDisposable } from '@lumino/disposable';
import { ElementExt } from '@lumino/domutils';

import { ActionError, Bridge } from '../bridge';
import { checkProposal, IEditProposal, parseProposal } from './checks';
import {
  findCell,
  ILanguages,
  insertReview,
  languageExtensions,
  loadReviewModule,
  showCell
} from './placement';
import type { Review } from './review';

/**
 * Answers the `notebook_edit_cell` actions of this page: it checks each
 * proposal against the live notebook, opens its review inside the cell and
 * keeps track of the open reviews, at most one per cell.
 *
 * The review's code and the merge view are loaded on the first proposal,
 * in their own chunk. There is never a fallback that writes without review.
 */
export class ReviewManager implements IDisposable {
  /**
   * Create the manager; register {@link invoke} and {@link abort} as the
   * bridge's handlers of the invoke and abort actions.
   */
  constructor(options: ReviewManager.IOptions) {
    this._shell = options.shell;
    this._notebooks = options.notebooks;
    this._bridge = options.bridge;
    this._languages = options.languages ?? null;
    this._onChange = options.onChange ?? (() => undefined);
    this._trans = options.trans;
    this._bridge.toolsEnabledChanged.connect(this._onToolsEnabled, this);
    this._bridge.welcomed.connect(this._onToolsEnabled, this);
  }

  /**
   * Whether the manager is disposed.
   */
  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /**
   * Handle `edit-cell.invoke`: check the proposal against the live model in
   * the contract's order, bring the cell into view and open its review.
   *
   * @returns `{diffReviewOpened: true}` once the review is shown.
   * @throws ActionError with the code of the first failing check.
   */
  async invoke(
    data: Record<string, unknown>
  ): Promise<Record<string, unknown>> {
    const proposal = parseProposal(data);
    if (!proposal) {
      throw new ActionError('invalid-input', 'The edit request is malformed.');
    }
    const { callId } = proposal;
    const open = this._reviews.get(callId);
    if (open && !open.isDecided) {
      // A repeated request never opens a second review.
      return { diffReviewOpened: true };
    }
    if (open || this._pending.has(callId)) {
      throw new ActionError(
        'diff-unavailable',
        'This call already has a review.'
      );
    }
    let target = this._check(proposal);
    const pending = { aborted: false };
    this._pending.set(callId, pending);
    try {
      const [ui, extensions] = await Promise.all([
        loadReviewModule(),
        languageExtensions(this._languages, target.model.mimeType)
      ]);
      if (!ui || !(await showCell(target.panel.content, target.cell))) {
        throw new ActionError(
          'diff-unavailable',
          'The diff review cannot be shown for this cell.'
        );
      }
      if (pending.aborted) {
        throw new ActionError(
          'diff-unavailable',
          'The proposal was withdrawn before it opened.'
        );
      }
      // Loading and scrolling took time: every check must hold now.
      target = this._check(proposal);
      const view = new ui.ReviewView({
        callId,
        cellId: proposal.cellId,
        original: target.model.sharedModel.getSource(),
        proposed: proposal.newSource,
        extensions,
        trans: this._trans
      });
      if (!insertReview(target.cell, view)) {
        view.dispose();
        throw new ActionError(
          'diff-unavailable',
          'The diff review cannot be shown for this cell.'
        );
      }
      this._supersede(target.panel, proposal.cellId);
      const review = new ui.Review({
        proposal,
        panel: target.panel,
        cell: target.cell,
        view,
        bridge: this._bridge,
        onChange: this._onChange,
        trans: this._trans
      });
      this._reviews.set(callId, review);
      review.closed.connect(this._onClosed, this);
      ElementExt.scrollIntoViewIfNeeded(
        target.panel.content.outerNode,
        view.node
      );
    } finally {
      this._pending.delete(callId);
    }
    this._onChange();
    return { diffReviewOpened: true };
  }

  /**
   * Handle `edit-cell.abort`: withdraw the call's open review, or make sure
   * a review still being prepared never opens. The server records the
   * withdrawal itself, so no `review` message is sent.
   *
   * @returns `{withdrawn}`, false for an unknown or already decided call.
   */
  abort(data: Record<string, unknown>): Record<string, unknown> {
    const callId = typeof data.callId === 'string' ? data.callId : '';
    const pending = this._pending.get(callId);
    if (pending) {
      pending.aborted = true;
      return { withdrawn: true };
    }
    const review = this._reviews.get(callId);
    if (!review || review.isDecided) {
      return { withdrawn: false };
    }
    review.dispose();
    this._onChange();
    return { withdrawn: true };
  }

  /**
   * Close every review without reporting a decision, and disconnect.
   */
  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._bridge.toolsEnabledChanged.disconnect(this._onToolsEnabled, this);
    this._bridge.welcomed.disconnect(this._onToolsEnabled, this);
    this._pending.forEach(pending => (pending.aborted = true));
    this._reviews.forEach(review => review.dispose());
  }

  /**
   * The page's checks in the contract's order, against the live model.
   */
  private _check(proposal: IEditProposal): Private.ITarget {
    const current = this._shell.currentWidget;
    const panel = this._notebooks.currentWidget;
    if (!panel || panel !== current || panel.isDisposed || !panel.model) {
      throw new ActionError(
        'not-authoring-view',
        'The active tab is not a notebook editor.'
      );
    }
    const found = findCell(panel, proposal.cellId);
    const facts = found && {
      cellType: found.model.type,
      editable: found.model.sharedModel.getMetadata('editable'),
      source: found.model.sharedModel.getSource()
    };
    // The local path: under real-time collaboration `context.path` carries
    // the collaborative drive's prefix, which the server never reports.
    const failure = checkProposal(proposal, panel.context.localPath, facts);
    if (failure) {
      throw new ActionError(failure.code, failure.message);
    }
    return { panel, ...found! };
  }

  /**
   * Close the reviews of the same cell for a newer proposal.
   */
  private _supersede(panel: NotebookPanel, cellId: string): void {
    for (const review of [...this._reviews.values()]) {
      if (review.panel === panel && review.proposal.cellId === cellId) {
        review.supersede();
      }
    }
  }

  private _onClosed(review: Review): void {
    const callId = review.proposal.callId;
    if (this._reviews.get(callId) === review) {
      this._reviews.delete(callId);
    }
  }

  private _onToolsEnabled(): void {
    this._reviews.forEach(review => review.toolsEnabledChanged());
  }

  private _shell: JupyterFrontEnd.IShell;
  private _notebooks: INotebookTracker;
  private _trans: TranslationBundle;
  private _bridge: Bridge;
  private _languages: ILanguages | null;
  private _onChange: () => void;
  private _pending = new Map<string, { aborted: boolean }>();
  private _reviews = new Map<string, Review>();
  private _isDisposed = false;
}

/**
 * The types of the review manager.
 */
export namespace ReviewManager {
  /**
   * The options of a review manager.
   */
  export interface IOptions {
    /** The application shell; its current widget must be the notebook. */
    shell: JupyterFrontEnd.IShell;
    /** The notebook tracker. */
    notebooks: INotebookTracker;
    /** The page bridge, for Keep verdicts, decisions and the kill switch. */
    bridge: Bridge;
    /** The editor languages, for highlighting in the diff; optional. */
    languages?: ILanguages | null;
    /** Called once after a review opened, was decided or was withdrawn. */
    onChange?: () => void;
    /** The words of the reviews, in the person's language. */
    trans: TranslationBundle;
  }
}

namespace Private {
  /**
   * The notebook, cell widget and cell model an invoke targets.
   */
  export interface ITarget {
    panel: NotebookPanel;
    cell: Cell;
    model: ICellModel;
  }
}

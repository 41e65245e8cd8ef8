// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import type { TranslationBundle } from '@jupyterlab/translation';
import { Cell, ICellModel } from '@jupyterlab/cells';
import { NotebookPanel } from '@jupyterlab/notebook';
import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import { Bridge } from '../bridge';
import { sourceHash } from '../hash';
import { IEditProposal, Messages, replacement, verdictMessage } from './checks';
import type { ReviewView } from './view';

/**
 * One open review of a proposed whole-cell edit: what Keep and Undo do, and
 * which state its view shows.
 *
 * The cell is left alone until Keep: then the server is asked first, and
 * the proposal is applied in one transaction only if the cell still holds
 * the source the proposal was made against. Each review reports at most one
 * decision (contract 9, `review`).
 */
export class Review implements IDisposable {
  /**
   * Take over a view that is already shown in its cell.
   */
  constructor(options: Review.IOptions) {
    this.proposal = options.proposal;
    this.panel = options.panel;
    this.cell = options.cell;
    this.view = options.view;
    this._bridge = options.bridge;
    this._onChange = options.onChange;
    this._trans = options.trans;
    this.view.keepRequested.connect(this._keep, this);
    this.view.undoRequested.connect(this._undo, this);
    this.view.disposed.connect(this._onViewDisposed, this);
    this._render();
  }

  /**
   * The proposal under review.
   */
  readonly proposal: IEditProposal;

  /**
   * The notebook that holds the cell.
   */
  readonly panel: NotebookPanel;

  /**
   * The cell under review.
   */
  readonly cell: Cell;

  /**
   * The review's view, inside the cell.
   */
  readonly view: ReviewView;

  /**
   * Whether the person's decision was reported (a conflict's message may
   * still show).
   */
  get isDecided(): boolean {
    return this._decided;
  }

  /**
   * Emitted once, when the review is gone from the cell.
   */
  get closed(): ISignal<this, void> {
    return this._closed;
  }

  /**
   * Whether the review is closed.
   */
  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /**
   * Follow the kill switch: Keep is disabled while tool edits are off, and
   * works again once they are back on, even after a Keep the server refused
   * for the kill switch.
   */
  toolsEnabledChanged(): void {
    if (this._bridge.toolsEnabled && this._refusal === 'kill-switch') {
      this._refusal = null;
    }
    this._render();
  }

  /**
   * Close the review for a newer proposal of the same cell.
   */
  supersede(): void {
    this._decide(this._decided ? null : 'superseded');
  }

  /**
   * Close the review without reporting a decision: the server aborted the
   * call and records that itself.
   */
  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this.view.dispose();
    this._closed.emit();
    Signal.clearData(this);
  }

  /**
   * Show the state that follows from the review and the kill switch.
   */
  private _render(): void {
    if (this._decided || this._isDisposed) {
      return;
    }
    if (this._keeping) {
      this.view.setState('keeping', Messages.keeping(this._trans));
    } else if (this._refusal) {
      this.view.setState('refused', verdictMessage(this._refusal, this._trans));
    } else if (!this._bridge.toolsEnabled) {
      this.view.setState('refused', Messages.toolsDisabled(this._trans));
    } else {
      this.view.setState('open');
    }
  }

  private async _keep(): Promise<void> {
    const { callId, expectedSourceHash, newSource } = this.proposal;
    this._keeping = true;
    this._render();
    const verdict = await this._bridge.requestKeep(callId);
    this._keeping = false;
    if (this._isDisposed) {
      return;
    }
    if (!verdict.ok) {
      this._refusal = verdict.code ?? 'refused';
      this._render();
      return;
    }
    const shared = this.cell.model.sharedModel;
    const locked = shared.getMetadata('editable') === false;
    if (locked || sourceHash(shared.getSource()) !== expectedSourceHash) {
      // Nothing is applied; the message stays until the person dismisses it.
      this._report('conflict');
      this.view.setState(
        'conflict',
        locked ? Messages.locked(this._trans) : Messages.conflict(this._trans)
      );
      return;
    }
    const refocus = this.view.hasFocus;
    Private.applySource(this.cell.model, newSource);
    this._decide('keep');
    if (refocus && !this.cell.isDisposed) {
      // Where one Ctrl+Z undoes the whole replacement.
      this.cell.editor?.focus();
    }
  }

  private _undo(): void {
    const refocus = this.view.hasFocus;
    this._decide(this._decided ? null : 'undo');
    if (refocus && !this.cell.isDisposed) {
      this.cell.node.focus({ preventScroll: true });
    }
  }

  /**
   * Close the review and report a decision, if it has one.
   */
  private _decide(decision: Review.Decision | null): void {
    if (decision) {
      this._report(decision);
    }
    this.dispose();
  }

  private _report(decision: Review.Decision): void {
    this._decided = true;
    this._bridge.send({
      type: 'review',
      callId: this.proposal.callId,
      decision
    });
    this._onChange();
  }

  /**
   * The view went away with its cell (deleted, type changed, notebook
   * closed) while the review was open: the proposal is withdrawn.
   */
  private _onViewDisposed(): void {
    if (this._isDisposed) {
      return;
    }
    if (!this._decided) {
      this._report('withdrawn');
    }
    this.dispose();
  }

  private _trans: TranslationBundle;
  private _bridge: Bridge;
  private _onChange: () => void;
  private _keeping = false;
  private _refusal: string | null = null;
  private _decided = false;
  private _isDisposed = false;
  private _closed = new Signal<this, void>(this);
}

/**
 * The types of a review.
 */
export namespace Review {
  /**
   * The options of a review.
   */
  export interface IOptions {
    /** The proposal under review. */
    proposal: IEditProposal;
    /** The notebook that holds the cell. */
    panel: NotebookPanel;
    /** The cell under review. */
    cell: Cell;
    /** The view, already inserted in the cell. */
    view: ReviewView;
    /** The page bridge, for Keep verdicts, decisions and the kill switch. */
    bridge: Bridge;
    /** Called once after each reported decision. */
    onChange: () => void;
    /** The words of the status line, in the person's language. */
    trans: TranslationBundle;
  }

  /**
   * The decisions a page reports (contract 9, `review`).
   */
  export type Decision =
    'keep' | 'undo' | 'conflict' | 'withdrawn' | 'superseded';
}

namespace Private {
  /**
   * Replace a cell's source by `source` in one transaction, so one undo step
   * (one Y transaction under real-time collaboration): only the changed
   * middle is replaced, keeping collaborators' cursors outside it.
   *
   * @param model - The cell model.
   * @param source - The complete new source.
   */
  export function applySource(model: ICellModel, source: string): void {
    const shared = model.sharedModel;
    const { start, end, text } = replacement(shared.getSource(), source);
    const undo = (shared as { undoManager?: { stopCapturing(): void } | null })
      .undoManager;
    // Never fold the person's typing just before or after into this step.
    undo?.stopCapturing();
    shared.transact(() => shared.updateSource(start, end, text));
    undo?.stopCapturing();
  }
}

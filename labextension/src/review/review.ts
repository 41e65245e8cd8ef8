// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import type { TranslationBundle } from '@jupyterlab/translation';
import { Cell, ICellModel } from '@jupyterlab/cells';
import { NotebookPanel } from '@jupyterlab/notebook';
import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import { Bridge } from '../bridge';
import { sourceHash } from '../hash';
import {
  IEditProposal,
  IInsertProposal,
  Messages,
  replacement,
  verdictMessage
} from './checks';
import type { ReviewView } from './view';

/**
 * One open review of a proposed change: a whole-cell edit or a new cell.
 * It decides what Keep and Undo do and which state its view shows.
 *
 * The notebook is left alone until Keep: then the server is asked first,
 * and the change is applied in one transaction only if it still applies
 * (the cell still holds the source the edit was made against; the cell a
 * new one follows is still there). Each review reports at most one decision
 * (docs/protocol.md section 6, `review`).
 */
export class Review implements IDisposable {
  /**
   * Take over a view that is already shown in its cell.
   */
  constructor(options: Review.IOptions) {
    this.change = options.change;
    this.panel = options.panel;
    this.view = options.view;
    this._bridge = options.bridge;
    this._onChange = options.onChange;
    this._trans = options.trans;
    this.view.keepRequested.connect(this._onKeepRequested, this);
    this.view.undoRequested.connect(this._undo, this);
    this.view.disposed.connect(this._onViewDisposed, this);
    this._render();
  }

  /**
   * The change under review.
   */
  readonly change: Review.IChange;

  /**
   * The notebook the change is for.
   */
  readonly panel: NotebookPanel;

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
   * The decision reported, `null` while none was.
   */
  get decision(): Review.Decision | null {
    return this._decision;
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
   * Press Keep for the panel's Keep all: as the review's own Keep, except
   * that the notebook stays where the person is. The active cell, the focus
   * and the place on screen of the active cell are left as they were.
   *
   * @returns Whether Keep was pressed (only while the review is open).
   */
  keepInPlace(): boolean {
    if (this.view.state !== 'open') {
      return false;
    }
    void this._keep(true);
    return true;
  }

  /**
   * Press Undo for the panel's Undo all, leaving the active cell where it
   * is on screen.
   *
   * @returns Whether Undo was pressed.
   */
  undoInPlace(): boolean {
    if (this.view.state === 'keeping') {
      return false;
    }
    const hold = Private.holdActiveCell(this.panel);
    this._decide(this._decided ? null : 'undo');
    hold();
    return true;
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

  private _onKeepRequested(): void {
    void this._keep(false);
  }

  private async _keep(inPlace: boolean): Promise<void> {
    this._keeping = true;
    this._render();
    const verdict = await this._bridge.requestKeep(this.change.callId);
    this._keeping = false;
    if (this._isDisposed) {
      return;
    }
    if (!verdict.ok) {
      this._refusal = verdict.code ?? 'refused';
      this._render();
      return;
    }
    const conflict = this.change.conflict();
    if (conflict !== null) {
      // Nothing is applied; the message stays until the person dismisses it.
      this._report('conflict');
      this.view.setState('conflict', conflict);
      return;
    }
    if (inPlace) {
      const hold = Private.holdActiveCell(this.panel);
      this.change.apply();
      this._decide('keep');
      hold();
      return;
    }
    const refocus = this.view.hasFocus;
    this.change.apply();
    this._decide('keep');
    this.change.focusAfter('keep', refocus);
  }

  private _undo(): void {
    const refocus = this.view.hasFocus;
    this._decide(this._decided ? null : 'undo');
    this.change.focusAfter('undo', refocus);
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
    this._decision = decision;
    this._bridge.send({
      type: 'review',
      callId: this.change.callId,
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
  private _decision: Review.Decision | null = null;
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
    /** The change under review. */
    change: IChange;
    /** The notebook the change is for. */
    panel: NotebookPanel;
    /** The view, already shown. */
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

  /**
   * What a review's Keep applies, and when it no longer can.
   */
  export interface IChange {
    /** The tool call that proposed it. */
    readonly callId: string;
    /** The cell whose source it replaces; `null` for a new cell. */
    readonly cellId: string | null;
    /**
     * Why it cannot be applied now, in words for the person; `null` when it
     * can. Read after the server allowed Keep, right before applying.
     */
    conflict(): string | null;
    /** Apply it, as one undo step. */
    apply(): void;
    /**
     * Move the focus after a decision, if it was in the review (`refocus`),
     * to where the person would go on from.
     */
    focusAfter(decision: 'keep' | 'undo', refocus: boolean): void;
  }

  /**
   * The change of a whole-cell edit: the cell must still hold the source
   * the proposal was made against, and must not be locked.
   *
   * @param proposal - The edit request.
   * @param cell - The cell widget under review.
   * @param trans - The words of the conflict messages.
   * @param chosen - The source the person chose by dropping hunks, read at
   *   Keep; `null` for the whole proposal.
   */
  export function editChange(
    proposal: IEditProposal,
    cell: Cell,
    trans: TranslationBundle,
    chosen: () => string | null = () => null
  ): IChange {
    return {
      callId: proposal.callId,
      cellId: proposal.cellId,
      conflict: () => {
        const shared = cell.model.sharedModel;
        if (shared.getMetadata('editable') === false) {
          return Messages.locked(trans);
        }
        return sourceHash(shared.getSource()) === proposal.expectedSourceHash
          ? null
          : Messages.conflict(trans);
      },
      apply: () =>
        Private.applySource(cell.model, chosen() ?? proposal.newSource),
      focusAfter: (decision, refocus) => {
        if (!refocus || cell.isDisposed) {
          return;
        }
        if (decision === 'keep') {
          // Where one Ctrl+Z undoes the whole replacement.
          cell.editor?.focus();
        } else {
          cell.node.focus({ preventScroll: true });
        }
      }
    };
  }

  /**
   * The change of a new cell: it goes right after the cell `afterCellId`;
   * for the top, right before the cell that was first when the pending
   * cell opened (it shows above that cell). Only while that cell is still
   * in the notebook.
   *
   * @param proposal - The insert request.
   * @param panel - The notebook.
   * @param trans - The words of the conflict message.
   * @param firstCellId - For the top: the id of the cell that was first.
   */
  export function insertChange(
    proposal: IInsertProposal,
    panel: NotebookPanel,
    trans: TranslationBundle,
    firstCellId: string | null = null
  ): IChange {
    let inserted = -1;
    const [anchor, offset] =
      proposal.afterCellId === null
        ? [firstCellId, 0]
        : [proposal.afterCellId, 1];
    const index = (): number => {
      const cells = panel.model?.cells;
      if (!cells || panel.isDisposed) {
        return -1;
      }
      for (let i = 0; i < cells.length; i++) {
        if (cells.get(i).id === anchor) {
          return i + offset;
        }
      }
      return -1;
    };
    return {
      callId: proposal.callId,
      cellId: null,
      conflict: () => (index() < 0 ? Messages.anchorGone(trans) : null),
      apply: () => {
        inserted = index();
        Private.insertCell(panel, inserted, proposal);
      },
      focusAfter: (decision, refocus) => {
        if (decision !== 'keep' || inserted < 0 || panel.isDisposed) {
          return;
        }
        // The new cell becomes the active one, so that the person sees
        // where it went and one notebook Undo (Z) takes it out again.
        const notebook = panel.content;
        const cell = notebook.widgets[inserted];
        if (!cell) {
          return;
        }
        const focused =
          refocus || notebook.node.contains(document.activeElement);
        notebook.activeCellIndex = inserted;
        notebook.deselectAll();
        notebook.scrollToItem(inserted, 'auto').catch(() => undefined);
        if (!focused) {
          return;
        }
        notebook.mode = 'command';
        // A new cell's node reaches the page with the notebook's next render.
        void cell.ready.then(() =>
          window.requestAnimationFrame(() => {
            if (!cell.isDisposed && notebook.activeCell === cell) {
              cell.node.focus({ preventScroll: true });
            }
          })
        );
      }
    };
  }
}

namespace Private {
  /**
   * Note which cell of a notebook is active, whether it has the focus and
   * where it is on screen; the function returned puts all three back after
   * cells above it changed (a review closed, a source replaced, a cell
   * inserted), now and once the notebook has laid out its new cells.
   */
  export function holdActiveCell(panel: NotebookPanel): () => void {
    const notebook = panel.content;
    const cell = notebook.activeCell;
    const scroller = notebook.outerNode;
    if (!cell || panel.isDisposed || !cell.node.isConnected) {
      return () => undefined;
    }
    const top = cell.node.getBoundingClientRect().top;
    const focused = cell.node.contains(document.activeElement);
    const restore = (): void => {
      if (cell.isDisposed || !cell.node.isConnected) {
        return;
      }
      // A cell inserted or removed above must not make another one active.
      const index = notebook.widgets.indexOf(cell);
      if (notebook.activeCell !== cell && index >= 0) {
        notebook.activeCellIndex = index;
      }
      if (focused && !cell.node.contains(document.activeElement)) {
        if (notebook.mode === 'edit') {
          cell.editor?.focus();
        } else {
          cell.node.focus({ preventScroll: true });
        }
      }
      const moved = cell.node.getBoundingClientRect().top - top;
      if (Math.abs(moved) >= 1) {
        scroller.scrollTop += moved;
      }
    };
    return () => {
      restore();
      requestAnimationFrame(() => {
        restore();
        requestAnimationFrame(restore);
      });
    };
  }

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

  /**
   * Insert a new cell at `index` in one transaction, so one step of the
   * notebook's undo (one Y transaction under real-time collaboration).
   */
  export function insertCell(
    panel: NotebookPanel,
    index: number,
    proposal: IInsertProposal
  ): void {
    const shared = panel.model!.sharedModel;
    const undo = (shared as { undoManager?: { stopCapturing(): void } | null })
      .undoManager;
    undo?.stopCapturing();
    shared.transact(() => {
      shared.insertCell(index, {
        cell_type: proposal.cellType,
        source: proposal.source,
        metadata: {}
      });
    });
    undo?.stopCapturing();
  }
}

// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import { Cell } from '@jupyterlab/cells';
import { NotebookPanel } from '@jupyterlab/notebook';
import { IDisposable } from '@lumino/disposable';
import { ISignal } from '@lumino/signaling';

/**
 * The signal connections to ONE notebook that can change the page state.
 *
 * The page state tracker holds at most one watcher and disposes it as a whole
 * before watching another notebook, so switching tabs never leaves a stale or
 * duplicate connection behind.
 */
export class NotebookWatcher implements IDisposable {
  /**
   * Watch a notebook panel.
   *
   * @param panel - The notebook panel to watch.
   * @param onChange - Called for every signal that may change the state.
   */
  constructor(
    readonly panel: NotebookPanel,
    onChange: () => void
  ) {
    this._onChange = onChange;
    NotebookWatcher._alive++;
    const { content, context, sessionContext } = panel;
    this._connect(content.activeCellChanged, this._onActiveCell);
    this._connect(content.selectionChanged, this._changed);
    this._connect(context.pathChanged, this._changed);
    this._connect(context.fileChanged, this._changed);
    this._connect(sessionContext.sessionChanged, this._changed);
    this._connect(sessionContext.kernelChanged, this._changed);
    this._connect(panel.disposed, this._changed);
    const model = panel.model;
    if (model) {
      this._connect(model.cells.changed, this._onCells);
      this._connect(model.stateChanged, this._changed);
      this._connect(model.metadataChanged, this._changed);
    } else {
      // The model arrives with the context; re-watch it then.
      void context.ready.then(() => {
        if (!this._isDisposed && panel.model) {
          this._connect(panel.model.cells.changed, this._onCells);
          this._connect(panel.model.stateChanged, this._changed);
          this._connect(panel.model.metadataChanged, this._changed);
          this._changed();
        }
      });
    }
    this._watchCell(content.activeCell);
  }

  /**
   * The number of watchers not yet disposed, for tests: it must never exceed
   * one per page.
   */
  static get alive(): number {
    return NotebookWatcher._alive;
  }

  /**
   * Whether the watcher is disposed.
   */
  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /**
   * Disconnect from everything in the notebook.
   */
  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    NotebookWatcher._alive--;
    this._watchCell(null);
    for (const disconnect of this._disconnects) {
      disconnect();
    }
    this._disconnects.length = 0;
  }

  private _connect<T, U>(
    signal: ISignal<T, U>,
    slot: (sender: T, args: U) => void
  ): void {
    signal.connect(slot, this);
    this._disconnects.push(() => signal.disconnect(slot, this));
  }

  private _changed(): void {
    if (!this._isDisposed) {
      this._onChange();
    }
  }

  private _onActiveCell(_: unknown, cell: Cell | null): void {
    this._watchCell(cell);
    this._changed();
  }

  private _onCells(): void {
    // A changed cell type replaces the cell model; follow the new one even
    // if the notebook kept the active index and sent no activeCellChanged.
    const active = this.panel.content.activeCell;
    if (active?.model.sharedModel !== this._watched) {
      this._watchCell(active);
    }
    this._changed();
  }

  /**
   * Follow the source of the active cell, the only cell whose typing can
   * change the selected cell hash and the selected cell's source.
   */
  private _watchCell(cell: Cell | null): void {
    this._cellDisconnect?.();
    this._cellDisconnect = null;
    this._watched = null;
    const shared = cell?.model.sharedModel;
    if (!shared || this._isDisposed) {
      return;
    }
    const slot = (_: unknown, change: { sourceChange?: unknown }) => {
      if (change.sourceChange) {
        this._changed();
      }
    };
    shared.changed.connect(slot, this);
    this._watched = shared;
    this._cellDisconnect = () => shared.changed.disconnect(slot, this);
  }

  private static _alive = 0;
  private _onChange: () => void;
  private _disconnects: Array<() => void> = [];
  private _cellDisconnect: (() => void) | null = null;
  private _watched: Cell['model']['sharedModel'] | null = null;
  private _isDisposed = false;
}

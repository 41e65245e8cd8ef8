// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import { JupyterFrontEnd } from '@jupyterlab/application';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { IDisposable } from '@lumino/disposable';
import { Throttler } from '@lumino/polling';
import { ISignal, Signal } from '@lumino/signaling';

import { Bridge } from './bridge';
import { IPageState, readPageState, stableStringify } from './livestate';
import { sourceHash } from './hash';
import { NotebookWatcher } from './watcher';

/**
 * Keeps the server informed of this page's semantic state (contract 9).
 *
 * Every signal that may change the state is counted; the first one of a
 * coalescing window starts a trailing timer, and when it fires the state is
 * read and sent only if its fingerprint differs from the last one sent.
 */
export class PageStateTracker implements IDisposable {
  /**
   * Create a tracker and start watching.
   */
  constructor(options: PageStateTracker.IOptions) {
    this._shell = options.shell;
    this._notebooks = options.notebooks;
    this._bridge = options.bridge;
    this._url = options.url;
    this._flusher = new Throttler(() => this._flush(), {
      limit: options.windowMs ?? 100,
      edge: 'trailing'
    });

    this._shell.currentChanged?.connect(this._onCurrentChanged, this);
    this._notebooks.currentChanged.connect(this._onCurrentChanged, this);
    this._bridge.opened.connect(this._onOpened, this);
    window.addEventListener('focus', this._onFocus);
    window.addEventListener('blur', this._onFocus);
    document.addEventListener('visibilitychange', this._onFocus);
    this._onCurrentChanged();
  }

  /**
   * The notebook panel watched now: the shell's current widget when it is a
   * tracked notebook, else `null`.
   */
  get notebook(): NotebookPanel | null {
    return this._watcher?.panel ?? null;
  }

  /**
   * Counters for tests and diagnostics.
   */
  get stats(): PageStateTracker.IStats {
    return { ...this._stats, watchers: NotebookWatcher.alive };
  }

  /**
   * Emitted synchronously with every signal that may change the state or
   * the live context, whatever the coalescing window holds back.
   */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /**
   * Emitted after a `state` message was handed to the bridge.
   */
  get stateSent(): ISignal<this, IPageState> {
    return this._stateSent;
  }

  /**
   * Emitted with the counters at the end of every coalescing window.
   */
  get flushed(): ISignal<this, PageStateTracker.IStats> {
    return this._flushed;
  }

  /**
   * Whether the tracker is disposed.
   */
  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /**
   * The current state, read now.
   */
  read(): IPageState {
    return readPageState(this.notebook, this._url());
  }

  /**
   * Note one signal that may have changed the state.
   */
  notify(): void {
    if (this._isDisposed) {
      return;
    }
    this._stats.changes++;
    this._pending++;
    void this._flusher.invoke();
    this._changed.emit();
  }

  /**
   * Stop watching and drop every connection.
   */
  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._flusher.dispose();
    this._watcher?.dispose();
    this._watcher = null;
    this._shell.currentChanged?.disconnect(this._onCurrentChanged, this);
    this._notebooks.currentChanged.disconnect(this._onCurrentChanged, this);
    this._bridge.opened.disconnect(this._onOpened, this);
    window.removeEventListener('focus', this._onFocus);
    window.removeEventListener('blur', this._onFocus);
    document.removeEventListener('visibilitychange', this._onFocus);
    Signal.clearData(this);
  }

  private _onCurrentChanged(): void {
    const current = this._shell.currentWidget;
    const panel =
      current instanceof NotebookPanel && this._notebooks.has(current)
        ? current
        : null;
    if (panel !== this.notebook) {
      this._watcher?.dispose();
      this._watcher = panel
        ? new NotebookWatcher(panel, () => this.notify())
        : null;
    }
    this.notify();
  }

  private _onOpened(): void {
    // A new connection knows nothing: force the next state out.
    this._lastFingerprint = null;
    this.notify();
  }

  private _onFocus = (): void => this.notify();

  private _flush(): void {
    const coalesced = this._pending;
    this._pending = 0;
    if (this._isDisposed) {
      return;
    }
    const state = this.read();
    const fingerprint = sourceHash(stableStringify(state));
    if (fingerprint === this._lastFingerprint) {
      this._stats.deduplicated++;
    } else if (
      // A state holding a lone surrogate has no hash (null): the server
      // refuses that message as malformed (docs/protocol.md section 9).
      this._bridge.send({
        type: 'state',
        fingerprint: fingerprint as string,
        state,
        coalesced
      })
    ) {
      this._lastFingerprint = fingerprint;
      this._stats.sent++;
      this._stateSent.emit(state);
    }
    this._flushed.emit(this.stats);
  }

  private _shell: JupyterFrontEnd.IShell;
  private _notebooks: INotebookTracker;
  private _bridge: Bridge;
  private _url: () => string;
  private _watcher: NotebookWatcher | null = null;
  /** Flushes once per window, at its end, whatever the notifications in it. */
  private _flusher: Throttler;
  private _pending = 0;
  private _lastFingerprint: string | null = null;
  private _stats = { changes: 0, sent: 0, deduplicated: 0 };
  private _isDisposed = false;
  private _changed = new Signal<this, void>(this);
  private _stateSent = new Signal<this, IPageState>(this);
  private _flushed = new Signal<this, PageStateTracker.IStats>(this);
}

/**
 * The types of the page state tracker.
 */
export namespace PageStateTracker {
  /**
   * The options of a tracker.
   */
  export interface IOptions {
    /** The application shell; its main-area current widget is the active one. */
    shell: JupyterFrontEnd.IShell;
    /** The notebook tracker. */
    notebooks: INotebookTracker;
    /** The page bridge that carries `state` messages. */
    bridge: Bridge;
    /** The current page path. */
    url: () => string;
    /** The coalescing window in milliseconds (100 by default). */
    windowMs?: number;
  }

  /**
   * The tracker's counters.
   */
  export interface IStats {
    /** Change signals seen. */
    changes: number;
    /** `state` messages sent. */
    sent: number;
    /** Windows whose state had the fingerprint already sent. */
    deduplicated: number;
    /** Notebook watchers alive on the page (never more than one). */
    watchers: number;
  }
}

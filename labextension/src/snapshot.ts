// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import { IDisposable } from '@lumino/disposable';

import { Bridge } from './bridge';
import { PageStateTracker } from './state';

/**
 * Keeps the bridge's published answer to one action exactly current, so that
 * the bridge worker can answer it without the main thread.
 *
 * Every change of the live model happens on the main thread and reaches the
 * tracker's `changed` signal. The answer is read again in a microtask, so
 * within the task of the change (several signals of one task, for example
 * active cell and selection, make one read, of the final state), and never
 * behind the model once that task ends.
 */
export class ContextSnapshot implements IDisposable {
  /**
   * Publish the answer now and after every change.
   */
  constructor(options: ContextSnapshot.IOptions) {
    this._bridge = options.bridge;
    this._tracker = options.tracker;
    this._action = options.action;
    this._read = options.read;
    this._tracker.changed.connect(this._schedule, this);
    this._bridge.opened.connect(this._schedule, this);
    this._publish();
  }

  /**
   * How often the answer was read and what that cost on the main thread.
   */
  get stats(): ContextSnapshot.IStats {
    return { ...this._stats };
  }

  /**
   * Whether the snapshot is disposed.
   */
  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /**
   * Stop following changes and withdraw the answer, so that the registered
   * handler answers again.
   */
  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._tracker.changed.disconnect(this._schedule, this);
    this._bridge.opened.disconnect(this._schedule, this);
    this._bridge.publish(this._action, null);
  }

  private _schedule(): void {
    if (this._queued || this._isDisposed) {
      return;
    }
    this._queued = true;
    queueMicrotask(() => {
      this._queued = false;
      this._publish();
    });
  }

  private _publish(): void {
    if (this._isDisposed) {
      return;
    }
    const started = performance.now();
    let data: Record<string, unknown> | null;
    try {
      data = this._read();
    } catch {
      // Never leave an old answer behind: the handler reads the model then.
      data = null;
    }
    this._bridge.publish(this._action, data);
    const ms = performance.now() - started;
    this._stats.reads++;
    this._stats.totalMs += ms;
    this._stats.maxMs = Math.max(this._stats.maxMs, ms);
  }

  private _bridge: Bridge;
  private _tracker: PageStateTracker;
  private _action: string;
  private _read: () => Record<string, unknown>;
  private _queued = false;
  private _isDisposed = false;
  private _stats: ContextSnapshot.IStats = { reads: 0, totalMs: 0, maxMs: 0 };
}

/**
 * The types of the context snapshot.
 */
export namespace ContextSnapshot {
  /**
   * The options of a context snapshot.
   */
  export interface IOptions {
    /** The bridge that publishes the answer. */
    bridge: Bridge;
    /** The tracker whose `changed` signal covers every change of the answer. */
    tracker: PageStateTracker;
    /** The action answered, e.g. get-context. */
    action: string;
    /** Read the answer from the live model; it must be structured-clonable. */
    read: () => Record<string, unknown>;
  }

  /**
   * The cost of keeping the answer current.
   */
  export interface IStats {
    /** Reads of the answer (one per task with changes). */
    reads: number;
    /** Main-thread milliseconds spent reading and publishing, in total. */
    totalMs: number;
    /** The most milliseconds one read and publish took. */
    maxMs: number;
  }
}

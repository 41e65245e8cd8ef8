// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

/**
 * The part of the WebSocket interface that the page bridge uses, so that it
 * can hold either a plain WebSocket or a {@link WorkerSocket}.
 */
export interface IBridgeSocket {
  /** The WebSocket ready state (`WebSocket.CONNECTING` ... `WebSocket.CLOSED`). */
  readonly readyState: number;
  /** Called once the socket is open. */
  onopen: ((event: Event) => void) | null;
  /** Called with each server message that the socket does not answer itself. */
  onmessage: ((event: MessageEvent) => void) | null;
  /** Called once the socket is closed, whatever closed it. */
  onclose: ((event: CloseEvent) => void) | null;
  /** Send a text message. */
  send(data: string): void;
  /** Close the socket. */
  close(): void;
}

/**
 * The source of the bridge worker: plain, self-contained JavaScript, loaded
 * from a blob URL so that no bundler worker setup is needed.
 *
 * The worker owns the WebSocket. It relays every server message to the page,
 * except a `request` whose action has a snapshot: that one it answers at once
 * with the snapshot, so that the answer never waits for the page's main
 * thread, which a large notebook can keep busy rendering for a long time.
 */
export const WORKER_SOURCE = `'use strict';
let socket = null;
const snapshots = new Map();
const post = message => self.postMessage(message);
const closed = (code, reason, wasClean) => {
  post({ ev: 'close', code, reason, wasClean });
  self.close();
};
const answer = raw => {
  if (typeof raw !== 'string' || !snapshots.size) return false;
  let msg;
  try { msg = JSON.parse(raw); } catch (err) { return false; }
  if (!msg || msg.type !== 'request' || !snapshots.has(msg.action)) return false;
  const data = snapshots.get(msg.action);
  socket.send(JSON.stringify({ type: 'result', requestId: msg.requestId, ok: true, data }));
  return true;
};
self.onmessage = ({ data: m }) => {
  if (m.op === 'snapshot') {
    if (m.data === null) snapshots.delete(m.action); else snapshots.set(m.action, m.data);
  } else if (m.op === 'send') {
    if (socket && socket.readyState === 1) socket.send(m.data);
  } else if (m.op === 'open' && !socket) {
    try { socket = new WebSocket(m.url); } catch (err) { closed(1006, '', false); return; }
    socket.onopen = () => post({ ev: 'open' });
    socket.onmessage = e => { if (!answer(e.data)) post({ ev: 'message', data: e.data }); };
    socket.onclose = e => closed(e.code, e.reason, e.wasClean);
  } else if (m.op === 'close') {
    if (socket) socket.close(); else closed(1000, '', true);
  }
};
post({ ev: 'ready' });
`;

/**
 * A WebSocket that lives in a dedicated worker and answers requests from
 * snapshots there; see {@link WORKER_SOURCE}. It behaves like the WebSocket
 * it wraps for everything else: one instance per connection, events in the
 * same order, and the worker ends when the socket closes.
 */
export class WorkerSocket implements IBridgeSocket {
  /**
   * Start the worker and open the socket in it.
   *
   * @param url - The WebSocket URL, token query included.
   * @throws When the browser does not allow the worker (for example a
   *   Content-Security-Policy without `blob:` workers); use a plain WebSocket.
   */
  constructor(url: string) {
    if (!WorkerSocket.isSupported) {
      throw new Error('Bridge workers are not available on this page.');
    }
    const source = new Blob([WORKER_SOURCE], { type: 'text/javascript' });
    const blobUrl = URL.createObjectURL(source);
    try {
      this._worker = new Worker(blobUrl, { name: 'jupyter-copilot-bridge' });
    } catch (err) {
      Private.supported = false;
      throw err;
    } finally {
      // The worker resolved the URL when it was created.
      URL.revokeObjectURL(blobUrl);
    }
    this._worker.onmessage = evt => this._onWorkerMessage(evt.data);
    this._worker.onerror = evt => {
      evt.preventDefault();
      if (!this._ready) {
        // The script never ran (a policy blocked it): do not try again.
        Private.supported = false;
      }
      this._finish(1006, '', false);
    };
    this._worker.postMessage({ op: 'open', url });
  }

  /**
   * Whether this page can run the bridge in a worker; it turns false for
   * good once creating or starting a worker failed.
   */
  static get isSupported(): boolean {
    return Private.supported && typeof Worker !== 'undefined';
  }

  /**
   * The WebSocket ready state as the page last heard it from the worker.
   */
  get readyState(): number {
    return this._readyState;
  }

  /**
   * Called once the worker's socket is open.
   */
  onopen: ((event: Event) => void) | null = null;

  /**
   * Called with each server message that the worker did not answer itself.
   */
  onmessage: ((event: MessageEvent) => void) | null = null;

  /**
   * Called once the worker's socket closed; the worker has ended by then.
   */
  onclose: ((event: CloseEvent) => void) | null = null;

  /**
   * Send a text message, if the socket is open.
   */
  send(data: string): void {
    if (this._readyState === WebSocket.OPEN) {
      this._worker.postMessage({ op: 'send', data });
    }
  }

  /**
   * Close the socket; the worker ends once it has closed.
   */
  close(): void {
    if (this._readyState < WebSocket.CLOSING) {
      this._readyState = WebSocket.CLOSING;
      this._worker.postMessage({ op: 'close' });
      // A closing handshake that never ends must not keep the worker alive.
      window.setTimeout(
        () => this._finish(1006, '', false),
        Private.CLOSE_TIMEOUT
      );
    }
  }

  /**
   * Set the answer the worker gives to requests for an action, or withdraw
   * it with `null` so that those requests reach `onmessage` again.
   *
   * @param action - A bridge action name.
   * @param data - The result data, structured-clonable; `null` to withdraw.
   */
  setSnapshot(action: string, data: Record<string, unknown> | null): void {
    if (this._readyState !== WebSocket.CLOSED) {
      this._worker.postMessage({ op: 'snapshot', action, data });
    }
  }

  private _onWorkerMessage(msg: Private.IWorkerEvent): void {
    switch (msg.ev) {
      case 'ready':
        this._ready = true;
        break;
      case 'open':
        if (this._readyState === WebSocket.CONNECTING) {
          this._readyState = WebSocket.OPEN;
          this.onopen?.(new Event('open'));
        }
        break;
      case 'message':
        if (this._readyState === WebSocket.OPEN) {
          this.onmessage?.(new MessageEvent('message', { data: msg.data }));
        }
        break;
      case 'close':
        this._finish(msg.code ?? 1006, msg.reason ?? '', msg.wasClean ?? false);
        break;
    }
  }

  private _finish(code: number, reason: string, wasClean: boolean): void {
    if (this._readyState === WebSocket.CLOSED) {
      return;
    }
    this._readyState = WebSocket.CLOSED;
    this._worker.terminate();
    this.onclose?.(new CloseEvent('close', { code, reason, wasClean }));
  }

  private _worker: Worker;
  private _ready = false;
  private _readyState: number = WebSocket.CONNECTING;
}

namespace Private {
  /**
   * False once a worker could not be created or started on this page.
   */
  // eslint-disable-next-line prefer-const -- reassigned as `Private.supported`
  export let supported = true;

  /**
   * How long a closing socket may take before its worker is terminated.
   */
  export const CLOSE_TIMEOUT = 5000;

  /**
   * A message from the worker.
   */
  export interface IWorkerEvent {
    ev: 'ready' | 'open' | 'message' | 'close';
    data?: unknown;
    code?: number;
    reason?: string;
    wasClean?: boolean;
  }
}

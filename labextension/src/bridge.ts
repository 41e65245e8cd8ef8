// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';
import { UUID } from '@lumino/coreutils';
import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import {
  ActionError,
  failure,
  IApprovalEnded,
  IApprovalRequest,
  IFileReview,
  IFileReviewEnded,
  parseApprovalEnded,
  parseApprovalRequest,
  parseFileReview,
  parseFileReviewEnded,
  PageMessage,
  parseMessage,
  PROTOCOL,
  REFUSAL_TEXT
} from './protocol';
import type { WelcomeMessage } from './generated/bridge';
import { IKeepVerdict as KeepVerdict, KeepWaiters, TIMED_OUT } from './keeps';
import { IBridgeSocket, WorkerSocket } from './socketworker';

export { ActionError, PROTOCOL } from './protocol';

/**
 * The single page-to-server WebSocket of this JupyterLab page.
 *
 * It says `hello` on every (re)connection, keeps the server's `welcome`,
 * answers `request` messages with the registered action handlers, and
 * reconnects with backoff until disposed. The socket runs in a worker when
 * the page allows it, so that requests with a published answer never wait
 * for the main thread.
 */
export class Bridge implements IDisposable {
  /**
   * Create a bridge; call {@link connect} to open it.
   */
  constructor(options: Bridge.IOptions) {
    this.pageId = options.pageId ?? UUID.uuid4();
    this._settings = options.serverSettings ?? ServerConnection.makeSettings();
    this._url = options.url;
  }

  /**
   * The id of this page, made once per page load and kept across reconnects.
   */
  readonly pageId: string;

  /**
   * The server's latest `welcome`, or `null` before the first one.
   */
  get welcome(): Bridge.IWelcome | null {
    return this._welcome;
  }

  /**
   * Whether tool invocations are currently allowed (the kill switch).
   */
  get toolsEnabled(): boolean {
    return this._welcome?.toolsEnabled ?? false;
  }

  /**
   * Whether the socket is open, so that {@link send} delivers.
   */
  get isOpen(): boolean {
    return this._ws?.readyState === WebSocket.OPEN;
  }

  /**
   * Emitted after each (re)connection, once `hello` has been sent.
   */
  get opened(): ISignal<this, void> {
    return this._opened;
  }

  /**
   * Emitted with each `welcome` from the server.
   */
  get welcomed(): ISignal<this, Bridge.IWelcome> {
    return this._welcomed;
  }

  /**
   * Emitted when the kill switch changes (`tools-enabled`).
   */
  get toolsEnabledChanged(): ISignal<this, boolean> {
    return this._toolsEnabledChanged;
  }

  /**
   * Emitted with each `approval`: a tool call waits for the person's
   * decision. A request the server sends again (after a reconnection) is
   * emitted again with the same request id.
   */
  get approvalRequested(): ISignal<this, IApprovalRequest> {
    return this._approvalRequested;
  }

  /**
   * Emitted with each `approval-ended`: the request is decided or gone.
   */
  get approvalEnded(): ISignal<this, IApprovalEnded> {
    return this._approvalEnded;
  }

  /**
   * Emitted with each `file-review`: an agent proposes to write a file that
   * is not a notebook, and nothing is written until the person keeps it. A
   * review the server sends again is emitted again with the same review id.
   */
  get fileReviewRequested(): ISignal<this, IFileReview> {
    return this._fileReviewRequested;
  }

  /**
   * Emitted with each `file-review-ended`: the review is decided or gone.
   */
  get fileReviewEnded(): ISignal<this, IFileReviewEnded> {
    return this._fileReviewEnded;
  }

  /**
   * Emitted when a message came for the parts of the page that load on first
   * use (an approval card, a file review) while they are not loaded yet: the
   * bridge holds such messages, in order, until {@link release}.
   */
  get held(): ISignal<this, void> {
    return this._heldSignal;
  }

  /**
   * Deliver the held messages, in the order they came, and every later one at
   * once: the parts that handle them are connected now.
   */
  release(): void {
    const held = this._held ?? [];
    this._held = null;
    held.forEach(emit => emit());
  }

  /**
   * Whether the bridge is disposed.
   */
  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /**
   * Register the handler of an action; requests for actions without one
   * are answered `unknown-action`.
   *
   * @returns A disposable that unregisters the handler.
   */
  registerAction(action: string, handler: Bridge.ActionHandler): IDisposable {
    this._handlers.set(action, handler);
    return {
      isDisposed: false,
      dispose: () => {
        if (this._handlers.get(action) === handler) {
          this._handlers.delete(action);
        }
      }
    };
  }

  /**
   * Publish the current answer to an action's requests. While the socket
   * runs in a worker, the worker answers them with it at once; call this in
   * the same task as every change of the answer, so that it is never behind.
   *
   * @param action - The action name.
   * @param data - The result data; `null` withdraws it, and the registered
   *   handler answers again.
   */
  publish(action: string, data: Record<string, unknown> | null): void {
    if (data) {
      this._published.set(action, data);
    } else {
      this._published.delete(action);
    }
    if (this._ws instanceof WorkerSocket) {
      this._ws.setSnapshot(action, data);
    }
  }

  /**
   * Ask the server whether the person may keep a reviewed proposal: send
   * `keep` and wait for the matching `keep-verdict`.
   *
   * @param callId - The call whose review the person wants to keep.
   * @param timeoutMs - How long to wait for the verdict (10 s by default).
   * @returns The verdict; `{ok: false, code: 'timeout'}` when none arrives
   *   in time or the socket is or becomes closed first.
   */
  requestKeep(
    callId: string,
    timeoutMs = Private.KEEP_TIMEOUT
  ): Promise<Bridge.IKeepVerdict> {
    if (this._isDisposed || !this.send({ type: 'keep', callId })) {
      return Promise.resolve(TIMED_OUT);
    }
    return this._keeps.wait(callId, timeoutMs);
  }

  /**
   * Open the socket, unless it is open or opening already.
   */
  connect(): void {
    if (this._isDisposed || this._ws) {
      return;
    }
    window.clearTimeout(this._retryTimer);
    const s = this._settings;
    let url = URLExt.join(s.wsUrl, 'copilot/api/bridge');
    if (s.appendToken && s.token) {
      url += `?token=${encodeURIComponent(s.token)}`;
    }
    let ws: IBridgeSocket;
    try {
      ws = this._createSocket(url);
    } catch {
      this._scheduleReconnect();
      return;
    }
    this._ws = ws;
    ws.onopen = () => {
      this._delay = Private.FIRST_DELAY;
      this.send({
        type: 'hello',
        protocol: PROTOCOL,
        pageId: this.pageId,
        url: this._url()
      });
      this._opened.emit();
    };
    ws.onmessage = evt => void this._onMessage(evt.data);
    ws.onclose = () => {
      this._ws = null;
      this._keeps.failAll();
      if (ws instanceof WorkerSocket && !WorkerSocket.isSupported) {
        // The page forbids the worker: open a main-thread socket right away.
        this.connect();
        return;
      }
      this._scheduleReconnect();
    };
  }

  /**
   * Send a message if the socket is open.
   *
   * @returns Whether the message was handed to the socket.
   */
  send(message: PageMessage): boolean {
    if (!this._ws || this._ws.readyState !== WebSocket.OPEN) {
      return false;
    }
    this._ws.send(JSON.stringify(message));
    return true;
  }

  /**
   * Close the socket for good.
   */
  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    window.clearTimeout(this._retryTimer);
    const ws = this._ws;
    this._ws = null;
    if (ws) {
      ws.onopen = ws.onmessage = ws.onclose = null;
      ws.close();
    }
    this._handlers.clear();
    this._published.clear();
    this._keeps.failAll();
    Signal.clearData(this);
  }

  /**
   * A socket in a worker, loaded with the published answers, or a plain
   * WebSocket when the settings bring their own class or no worker can run.
   */
  private _createSocket(url: string): IBridgeSocket {
    const s = this._settings;
    if (s.WebSocket === WebSocket && WorkerSocket.isSupported) {
      try {
        const ws = new WorkerSocket(url);
        this._published.forEach((data, action) => ws.setSnapshot(action, data));
        return ws;
      } catch {
        // A policy forbids blob workers: keep the socket on the main thread.
      }
    }
    return new s.WebSocket(url);
  }

  private _scheduleReconnect(): void {
    if (this._isDisposed) {
      return;
    }
    window.clearTimeout(this._retryTimer);
    this._retryTimer = window.setTimeout(() => this.connect(), this._delay);
    this._delay = Math.min(this._delay * 2, Private.MAX_DELAY);
  }

  private async _onMessage(raw: unknown): Promise<void> {
    const msg = parseMessage(raw);
    if (!msg) {
      return;
    }
    switch (msg.type) {
      case 'welcome':
        this._welcome = msg as unknown as Bridge.IWelcome;
        this._welcomed.emit(this._welcome);
        break;
      case 'tools-enabled': {
        const enabled = msg.enabled === true;
        if (this._welcome) {
          this._welcome = { ...this._welcome, toolsEnabled: enabled };
        }
        this._toolsEnabledChanged.emit(enabled);
        break;
      }
      case 'keep-verdict':
        this._keeps.settle(msg);
        break;
      case 'approval': {
        const approval = parseApprovalRequest(msg);
        if (approval) {
          this._deliver(() => this._approvalRequested.emit(approval));
        }
        break;
      }
      case 'approval-ended': {
        const ended = parseApprovalEnded(msg);
        if (ended) {
          this._deliver(() => this._approvalEnded.emit(ended));
        }
        break;
      }
      case 'file-review': {
        const review = parseFileReview(msg);
        if (review) {
          this._deliver(() => this._fileReviewRequested.emit(review));
        }
        break;
      }
      case 'file-review-ended': {
        const ended = parseFileReviewEnded(msg);
        if (ended) {
          this._deliver(() => this._fileReviewEnded.emit(ended));
        }
        break;
      }
      case 'request':
        await this._onRequest(msg);
        break;
      default:
        // `error` (invalid-message) and types of later protocol steps are
        // ignored: the server keeps the page connected either way.
        break;
    }
  }

  /**
   * Emit now, or hold until {@link release} while the parts that handle the
   * message are not loaded.
   */
  private _deliver(emit: () => void): void {
    if (this._held === null) {
      emit();
      return;
    }
    this._held.push(emit);
    this._heldSignal.emit();
  }

  private async _onRequest(msg: Record<string, unknown>): Promise<void> {
    const requestId = msg.requestId;
    const action = typeof msg.action === 'string' ? msg.action : '';
    const handler = this._handlers.get(action);
    let reply:
      { ok: true; data: Record<string, unknown> } | ReturnType<typeof failure>;
    if (!handler) {
      reply = failure(
        'unknown-action',
        'This page does not handle that action.'
      );
    } else {
      try {
        const data = typeof msg.data === 'object' && msg.data ? msg.data : {};
        reply = {
          ok: true,
          data: await handler(data as Record<string, unknown>)
        };
      } catch (err) {
        reply =
          err instanceof ActionError
            ? failure(err.code, err.message)
            : failure('page-error', REFUSAL_TEXT['page-error']);
      }
    }
    this.send({ type: 'result', requestId: requestId as string, ...reply });
  }

  private _settings: ServerConnection.ISettings;
  private _url: () => string;
  private _ws: IBridgeSocket | null = null;
  private _welcome: Bridge.IWelcome | null = null;
  private _handlers = new Map<string, Bridge.ActionHandler>();
  private _published = new Map<string, Record<string, unknown>>();
  private _keeps = new KeepWaiters();
  private _delay = Private.FIRST_DELAY;
  private _retryTimer = 0;
  private _isDisposed = false;
  private _opened = new Signal<this, void>(this);
  private _welcomed = new Signal<this, Bridge.IWelcome>(this);
  private _toolsEnabledChanged = new Signal<this, boolean>(this);
  private _approvalRequested = new Signal<this, IApprovalRequest>(this);
  private _approvalEnded = new Signal<this, IApprovalEnded>(this);
  private _fileReviewRequested = new Signal<this, IFileReview>(this);
  private _fileReviewEnded = new Signal<this, IFileReviewEnded>(this);
  private _held: Array<() => void> | null = [];
  private _heldSignal = new Signal<this, void>(this);
}

/**
 * The types of the bridge.
 */
export namespace Bridge {
  /**
   * The options of a bridge.
   */
  export interface IOptions {
    /** The server settings; the defaults when omitted. */
    serverSettings?: ServerConnection.ISettings;
    /** The page id; a new UUID when omitted. */
    pageId?: string;
    /** The current page path for the matcher (`hello.url`). */
    url: () => string;
  }

  /**
   * The server's `welcome` message (docs/protocol.md section 9).
   */
  export type IWelcome = WelcomeMessage;

  /**
   * The server's answer to `keep`.
   */
  export type IKeepVerdict = KeepVerdict;

  /**
   * An action handler: request `data` in, result `data` out. Throw an
   * {@link ActionError} to refuse with a code.
   */
  export type ActionHandler = (
    data: Record<string, unknown>
  ) => Record<string, unknown> | Promise<Record<string, unknown>>;
}

namespace Private {
  export const FIRST_DELAY = 1000;
  export const MAX_DELAY = 30000;

  /**
   * How long Keep waits for the server's verdict, in milliseconds.
   */
  export const KEEP_TIMEOUT = 10000;
}

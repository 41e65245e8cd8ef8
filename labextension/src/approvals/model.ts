// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import type { TranslationBundle } from '@jupyterlab/translation';
import { INotebookTracker } from '@jupyterlab/notebook';
import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import { ApprovalDecision, ClientCodes, CopilotApi } from '../api';
import { Bridge } from '../bridge';
import {
  IApprovalEnded,
  IApprovalRequest,
  IPermissionOption
} from '../protocol';
import { ApprovalTexts } from './texts';

/**
 * The approval requests of this page, one card each, in arrival order.
 *
 * A card holds only what a person needs to decide: the tool, the
 * operation, the target cell's position and the proposal's size. Requests
 * carry no source, so no card can show any. The server decides when a
 * request ends; the page only asks it (`POST copilot/api/approvals/<id>`).
 */
export class ApprovalModel implements IDisposable {
  /**
   * Create the model and listen to the bridge's approval messages.
   */
  constructor(options: ApprovalModel.IOptions) {
    this._bridge = options.bridge;
    this._notebooks = options.notebooks;
    this._api = options.api;
    this._trans = options.trans;
    this._bridge.approvalRequested.connect(this._onRequested, this);
    this._bridge.approvalEnded.connect(this._onEnded, this);
  }

  /**
   * The cards, oldest first.
   */
  get cards(): readonly ApprovalModel.ICard[] {
    return [...this._cards.values()];
  }

  /**
   * Emitted after any card was added, changed or removed.
   */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /**
   * Emitted with each new card (not for a request sent again).
   */
  get added(): ISignal<this, ApprovalModel.ICard> {
    return this._added;
  }

  /**
   * Whether the model is disposed.
   */
  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /**
   * Send the person's decision on a pending card. The card is removed when
   * the server accepts it; on a refusal or a failed request it shows why.
   *
   * @param requestId - The card's request.
   * @param decision - Allow once, deny, or one of a permission card's options.
   */
  async decide(requestId: string, decision: ApprovalDecision): Promise<void> {
    if (this._cards.get(requestId)?.state !== 'pending') {
      return;
    }
    this._update(requestId, { state: 'deciding', message: '' });
    const reply = await this._api.decideApproval(requestId, decision);
    if (!reply.error) {
      this._remove(requestId);
      return;
    }
    const { code, message } = reply.error;
    const refused = ClientCodes.isOwn(reply.error)
      ? {
          ended: false,
          text: ApprovalTexts.failure(
            code === ClientCodes.UNREACHABLE,
            this._trans
          )
        }
      : ApprovalTexts.refusal(code, message, this._trans);
    const state = refused.ended ? 'ended' : 'pending';
    if (
      this._update(requestId, { state, message: refused.text }) &&
      refused.ended
    ) {
      // The request is over: leave the reason up for a moment, then go.
      this._expireIn(requestId, Private.ENDED_LINGER);
    }
  }

  /**
   * Drop every card and stop listening.
   */
  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._bridge.approvalRequested.disconnect(this._onRequested, this);
    this._bridge.approvalEnded.disconnect(this._onEnded, this);
    this._timers.forEach(timer => window.clearTimeout(timer));
    this._timers.clear();
    this._cards.clear();
    Signal.clearData(this);
  }

  private _onRequested(_: Bridge, message: IApprovalRequest): void {
    const { request, path, expiresInMs } = message;
    const known = this._cards.get(request.requestId);
    // Sent again (after a reconnection): the server still waits, so an
    // ended card is open again.
    const kept = known && known.state !== 'ended' ? known : null;
    const shell = request.kind === 'shell';
    const card: ApprovalModel.ICard = {
      requestId: request.requestId,
      kind: request.kind,
      toolName: request.toolName,
      options: request.options,
      operation: ApprovalTexts.operation(request, this._trans),
      // A shell card's command, or the command an agent's own permission
      // request names: shown whole, never cut like a title.
      command:
        shell || request.kind === 'permission'
          ? (request.details.command ?? '')
          : '',
      target: shell
        ? ApprovalTexts.folder(request.details.folder ?? '', this._trans)
        : ApprovalTexts.target(
            this._notebooks,
            path,
            request.details.cellId,
            this._trans
          ),
      size: ApprovalTexts.size(request, this._trans),
      state: kept?.state ?? 'pending',
      message: kept?.message ?? ''
    };
    this._cards.set(card.requestId, card);
    if (expiresInMs > 0) {
      // Should `approval-ended` be lost with the connection, the card still
      // goes once the server has surely given up waiting.
      this._expireIn(card.requestId, expiresInMs + Private.EXPIRY_GRACE);
    }
    this._changed.emit();
    if (!known) {
      this._added.emit(card);
    }
  }

  private _onEnded(_: Bridge, message: IApprovalEnded): void {
    this._remove(message.requestId);
  }

  /**
   * Replace fields of a card; `false` when the card is gone.
   */
  private _update(
    requestId: string,
    patch: Partial<ApprovalModel.ICard>
  ): boolean {
    const card = this._cards.get(requestId);
    if (!card || this._isDisposed) {
      return false;
    }
    this._cards.set(requestId, { ...card, ...patch });
    this._changed.emit();
    return true;
  }

  private _remove(requestId: string): void {
    window.clearTimeout(this._timers.get(requestId));
    this._timers.delete(requestId);
    if (this._cards.delete(requestId)) {
      this._changed.emit();
    }
  }

  private _expireIn(requestId: string, ms: number): void {
    window.clearTimeout(this._timers.get(requestId));
    this._timers.set(
      requestId,
      window.setTimeout(() => this._remove(requestId), ms)
    );
  }

  private _trans: TranslationBundle;
  private _bridge: Bridge;
  private _notebooks: INotebookTracker;
  private _api: CopilotApi;
  private _cards = new Map<string, ApprovalModel.ICard>();
  private _timers = new Map<string, number>();
  private _isDisposed = false;
  private _changed = new Signal<this, void>(this);
  private _added = new Signal<this, ApprovalModel.ICard>(this);
}

/**
 * The types of the approval model.
 */
export namespace ApprovalModel {
  /**
   * The options of an approval model.
   */
  export interface IOptions {
    /** The page bridge that carries `approval` and `approval-ended`. */
    bridge: Bridge;
    /** The open notebooks, to find the target cell's position. */
    notebooks: INotebookTracker;
    /** The client of the server's API. */
    api: CopilotApi;
    /** The words of the cards, in the person's language. */
    trans: TranslationBundle;
  }

  /**
   * The states of a card (`data-state`): `pending` waits for the person,
   * `deciding` waits for the server, `ended` can no longer be decided.
   */
  export type State = 'pending' | 'deciding' | 'ended';

  /**
   * One card, with its texts ready to show.
   */
  export interface ICard {
    readonly requestId: string;
    /**
     * `edit`, `shell` for a command an agent wants to run, or `permission`
     * for an agent's own permission request.
     */
    readonly kind: string;
    /** The tool that waits, e.g. `notebook_edit_cell`, or the agent's tool call title. */
    readonly toolName: string;
    /** The answers a permission request offers, one button each; empty otherwise. */
    readonly options: readonly IPermissionOption[];
    /** What the tool would do. */
    readonly operation: string;
    /** The exact command line of a `shell` request or of an agent's own
     * request to run a command; "" otherwise. */
    readonly command: string;
    /**
     * E.g. "Cell 4 of 12 in analysis.ipynb", or "in data" for the folder a
     * command runs in; "" when the request names none.
     */
    readonly target: string;
    /** E.g. "384 bytes proposed"; "" when the request gives no size. */
    readonly size: string;
    readonly state: State;
    /** Why the last decision did not go through; "" otherwise. */
    readonly message: string;
  }
}

namespace Private {
  /**
   * How long after its expiry a card goes when no `approval-ended` came.
   */
  export const EXPIRY_GRACE = 5000;

  /**
   * How long an ended card stays up with its reason.
   */
  export const ENDED_LINGER = 4000;
}

// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import type { JupyterFrontEnd } from '@jupyterlab/application';
import type { TranslationBundle } from '@jupyterlab/translation';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import { ApprovalDecision, ClientCodes, CopilotApi } from '../api';
import { Bridge } from '../bridge';
import { sourceHash } from '../hash';
import { notebookAt, revealCell } from '../reveal';
import { runLocked } from '../run/checks';
import {
  IApprovalEnded,
  IApprovalRequest,
  IPermissionOption
} from '../protocol';
import type { Tool } from '../generated/vocabulary';
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
    this._shell = options.shell ?? null;
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
   * Bring a card's cell into view: activate its notebook's tab, make the
   * cell the active one and scroll to it. Nothing happens when the card
   * names no cell or the notebook is not open here.
   */
  reveal(requestId: string): void {
    const card = this._cards.get(requestId);
    if (card?.cellId) {
      revealCell(this._shell, this._notebooks, card.path, card.cellId);
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
    this._watches.forEach(stop => stop());
    this._watches.clear();
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
      program: shell
        ? ApprovalTexts.program(request.details.program ?? '', this._trans)
        : '',
      env: shell
        ? ApprovalTexts.ignoredEnv(
            request.details.ignoredEnv ?? [],
            this._trans
          )
        : '',
      target: shell
        ? ApprovalTexts.folder(request.details.folder ?? '', this._trans)
        : request.toolName === ('notebook_insert_cell' satisfies Tool)
          ? ApprovalTexts.insertTarget(
              this._notebooks,
              path,
              request.details.cellId,
              this._trans
            )
          : ApprovalTexts.target(
              this._notebooks,
              path,
              request.details.cellId,
              this._trans
            ),
      size: ApprovalTexts.size(request, this._trans),
      cellId: shell ? null : (request.details.cellId ?? null),
      path,
      expectedSourceHash: request.details.expectedSourceHash ?? null,
      runSource: '',
      runStale: false,
      runSeen: kept?.runSeen ?? false,
      state: kept?.state ?? 'pending',
      message: kept?.message ?? ''
    };
    const facts = this._runFacts(card);
    // A card that showed its cell unchanged says so when the cell changes.
    this._cards.set(card.requestId, {
      ...card,
      ...facts,
      runSeen: card.runSeen || (!!facts.runSource && !facts.runStale)
    });
    if (request.kind === 'run' && !this._watches.has(card.requestId)) {
      this._watch(card.requestId);
    }
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

  /**
   * A run card's line about the source: whether the cell still holds what
   * the agent read, as the person types.
   */
  private _runFacts(
    card: ApprovalModel.ICard
  ): Pick<ApprovalModel.ICard, 'runSource' | 'runStale'> {
    const expected = card.expectedSourceHash ?? undefined;
    if (card.kind !== 'run' || !expected) {
      return { runSource: '', runStale: false };
    }
    const cells = this._panel(card.path)?.model?.cells;
    let current: string | null = null;
    let locked = false;
    if (cells) {
      current = 'missing';
      for (let i = 0; i < cells.length; i++) {
        const cell = cells.get(i);
        if (cell.id === card.cellId) {
          current = sourceHash(cell.sharedModel.getSource()) ?? 'unreadable';
          locked = runLocked(cell.sharedModel.getMetadata());
          break;
        }
      }
    }
    return {
      runSource: ApprovalTexts.runSource(
        expected,
        current,
        this._trans,
        locked,
        card.runSeen
      ),
      runStale: locked || (current !== null && current !== expected)
    };
  }

  /**
   * Follow the notebook of a run card, so that the card says at once when
   * the cell no longer holds the source the agent read.
   */
  private _watch(requestId: string): void {
    const card = this._cards.get(requestId);
    const model = card ? this._panel(card.path)?.model : null;
    if (!model) {
      return;
    }
    const onChange = () => {
      const now = this._cards.get(requestId);
      if (!now) {
        return;
      }
      const facts = this._runFacts(now);
      if (facts.runSource !== now.runSource) {
        this._update(requestId, {
          ...facts,
          runSeen: now.runSeen || !facts.runStale
        });
      }
    };
    model.contentChanged.connect(onChange);
    this._watches.set(requestId, () =>
      model.contentChanged.disconnect(onChange)
    );
  }

  private _panel(path: string): NotebookPanel | null {
    return notebookAt(this._notebooks, path);
  }

  private _remove(requestId: string): void {
    window.clearTimeout(this._timers.get(requestId));
    this._timers.delete(requestId);
    this._watches.get(requestId)?.();
    this._watches.delete(requestId);
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
  private _shell: JupyterFrontEnd.IShell | null;
  private _api: CopilotApi;
  private _watches = new Map<string, () => void>();
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
    /** The shell, to bring a card's cell into view. */
    shell?: JupyterFrontEnd.IShell;
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
     * `edit`, `run` for a cell an agent asks to run, `shell` for a command
     * an agent wants to run, or `permission` for an agent's own permission
     * request.
     */
    readonly kind: string;
    /**
     * The tool that waits, e.g. `notebook_edit_cell`, or the agent's tool
     * call title; the card shows our tools by their spec's title.
     */
    readonly toolName: string;
    /** The answers a permission request offers, one button each; empty otherwise. */
    readonly options: readonly IPermissionOption[];
    /** What the tool would do. */
    readonly operation: string;
    /** The exact command line of a `shell` request or of an agent's own
     * request to run a command; "" otherwise. */
    readonly command: string;
    /** A shell card's "Runs /usr/bin/ls": the program that runs; "" otherwise. */
    readonly program: string;
    /**
     * A shell card's words on the environment variables the agent asked
     * for, which are not used; "" when it asked for none, and on other cards.
     */
    readonly env: string;
    /**
     * E.g. "Cell 4 of 12 in analysis.ipynb", "After cell 3 of 12 in
     * analysis.ipynb" for a new cell, or "in data" for the folder a command
     * runs in; "" when the request names none.
     */
    readonly target: string;
    /** E.g. "384 bytes proposed"; "" when the request gives no size. */
    readonly size: string;
    /** The cell the card is about, `null` when it names none. */
    readonly cellId: string | null;
    /** The notebook's path, as the server reported it. */
    readonly path: string;
    /** A run card's hash of the source to run; `null` for other cards. */
    readonly expectedSourceHash: string | null;
    /** A run card's line about that source ("" for other cards). */
    readonly runSource: string;
    /** Whether the cell will not run: it no longer holds the source the
     * agent read, or it is marked never to be run by an agent. */
    readonly runStale: boolean;
    /**
     * Whether the run card has shown its cell unchanged: a later change
     * happened while the card waited, and the card warns so.
     */
    readonly runSeen: boolean;
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

// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import type { TranslationBundle } from '@jupyterlab/translation';
import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import type { CopilotApi, IConversation } from '../api';
import { ChatTexts } from './texts';
import { ITurn, parseTurn } from './transcript';

/**
 * The person's earlier conversations: the list (all of them, or those about
 * the active notebook), one of them opened read-only, and what can be done
 * with one: export it as Markdown, delete it, or resume it when its agent
 * can load its earlier session. Archiving never deletes, so every archived
 * conversation stays reachable here until the person deletes it.
 */
export class ArchiveModel implements IDisposable {
  /**
   * Create the model of the archive.
   */
  constructor(options: ArchiveModel.IOptions) {
    this._api = options.api;
    this._trans = options.trans;
    this._activeNotebook = options.activeNotebook ?? (() => null);
    this._takeUp = options.takeUp ?? (async () => false);
  }

  /**
   * The path of the notebook in the main area, the one "Only this notebook"
   * keeps; `null` when no notebook is active.
   */
  get activeNotebook(): string | null {
    return this._activeNotebook();
  }

  /** Whether the list keeps only conversations about the active notebook. */
  get onlyThisNotebook(): boolean {
    return this._onlyThisNotebook;
  }

  set onlyThisNotebook(value: boolean) {
    if (value !== this._onlyThisNotebook) {
      this._onlyThisNotebook = value;
      this._changed.emit();
    }
  }

  /**
   * The conversations the list shows: all of them, or those whose messages
   * came from the active notebook; `null` while they load.
   */
  get shown(): readonly IConversation[] | null {
    const path = this.activeNotebook;
    if (this._list === null || !this._onlyThisNotebook || path === null) {
      return this._list;
    }
    return this._list.filter(c => (c.notebooks ?? []).includes(path));
  }

  /**
   * What the chat shows: the current conversation (`closed`), the list of
   * earlier ones (`list`) or one of them (`view`).
   */
  get mode(): ArchiveModel.Mode {
    return this._mode;
  }

  /** The earlier conversations, newest first; `null` while they load. */
  get conversations(): readonly IConversation[] | null {
    return this._list;
  }

  /** The conversation opened read-only, with its turns. */
  get viewing(): ArchiveModel.IViewing | null {
    return this._viewing;
  }

  /** Why the list or a conversation could not be read; "" otherwise. */
  get message(): string {
    return this._message;
  }

  /** Emitted when anything changes. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /** Whether the model is disposed. */
  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /**
   * Show the list of conversations other than the current one.
   *
   * @param currentId - The current conversation, left out of the list.
   */
  async openList(currentId: string | null): Promise<void> {
    const seq = this._go('list');
    this._list = null;
    this._changed.emit();
    const all = await this._api.conversations();
    if (seq === this._seq) {
      if (all.error) {
        this._list = [];
        this._message = ChatTexts.failure(all.error, this._trans);
      } else {
        this._list = all.result.filter(
          c => c.id !== currentId && c.title !== null
        );
      }
    }
    this._changed.emit();
  }

  /**
   * Open one conversation read-only.
   */
  async open(id: string): Promise<void> {
    const seq = this._go('view');
    this._viewing = null;
    this._changed.emit();
    const reply = await this._api.conversation(id);
    if (seq === this._seq) {
      if (reply.error) {
        this._message = ChatTexts.failure(reply.error, this._trans);
      } else {
        const { conversation, turns } = reply.result;
        this._viewing = {
          conversation,
          turns: turns.map(parseTurn).filter((t): t is ITurn => t !== null)
        };
      }
    }
    this._changed.emit();
  }

  /**
   * Delete a conversation for good, on the server too; the person confirmed.
   *
   * @returns `false` when the server refused or could not be reached (the
   *   message says why).
   */
  async remove(id: string): Promise<boolean> {
    const reply = await this._api.deleteConversation(id);
    if (reply.error && reply.error.code !== 'unknown-conversation') {
      this._message = ChatTexts.failure(reply.error, this._trans);
      this._changed.emit();
      return false;
    }
    this._list = (this._list ?? []).filter(c => c.id !== id);
    if (this._viewing?.conversation.id === id) {
      this._viewing = null;
      this._go('list');
    }
    this._changed.emit();
    return true;
  }

  /**
   * A conversation as a Markdown file, to download.
   */
  async exportFile(
    id: string
  ): Promise<{ text: string; filename: string } | null> {
    const reply = await this._api.exportConversation(id);
    if (reply.error) {
      this._message = ChatTexts.failure(reply.error, this._trans);
      this._changed.emit();
      return null;
    }
    return reply.result;
  }

  /**
   * Resume an archived conversation on the server and make it the current
   * one; the chat shows it, ready for the next message.
   *
   * @returns `false` when refused (the message says why).
   */
  async resume(id: string): Promise<boolean> {
    const reply = await this._api.resumeConversation(id);
    if (reply.error) {
      this._message = ChatTexts.failure(reply.error, this._trans);
      this._changed.emit();
      return false;
    }
    const { conversation, turns } = reply.result;
    if (!(await this._takeUp(conversation, turns))) {
      return false;
    }
    this.close();
    return true;
  }

  /**
   * One step back: from a conversation to the list, from the list to the
   * current conversation.
   */
  back(): void {
    if (this._mode === 'view' && this._list !== null) {
      this._go('list');
      this._changed.emit();
    } else {
      this.close();
    }
  }

  /**
   * Go back to the current conversation.
   */
  close(): void {
    if (this._mode !== 'closed') {
      this._go('closed');
      this._viewing = null;
      this._changed.emit();
    }
  }

  /**
   * Drop the signal connections.
   */
  dispose(): void {
    if (!this._isDisposed) {
      this._isDisposed = true;
      Signal.clearData(this);
    }
  }

  private _go(mode: ArchiveModel.Mode): number {
    this._mode = mode;
    this._message = '';
    return ++this._seq;
  }

  private _trans: TranslationBundle;
  private _api: CopilotApi;
  private _activeNotebook: () => string | null;
  private _onlyThisNotebook = false;
  private _takeUp: ArchiveModel.IOptions['takeUp'] & {};
  private _mode: ArchiveModel.Mode = 'closed';
  private _list: IConversation[] | null = null;
  private _viewing: ArchiveModel.IViewing | null = null;
  private _message = '';
  private _seq = 0;
  private _isDisposed = false;
  private _changed = new Signal<this, void>(this);
}

/**
 * The types of the archive model.
 */
export namespace ArchiveModel {
  /**
   * The options of the archive model.
   */
  export interface IOptions {
    /** The client of the server's API. */
    api: CopilotApi;
    /** The words of the panel, in the person's language. */
    trans: TranslationBundle;
    /** The path of the notebook in the main area, or `null`. */
    activeNotebook?: () => string | null;
    /**
     * Make a resumed conversation the current one (`ChatModel.takeUp`);
     * `false` when the current one could not be archived.
     */
    takeUp?: (
      conversation: IConversation,
      turns: readonly unknown[]
    ) => Promise<boolean>;
  }

  /**
   * What the chat shows, see {@link ArchiveModel.mode}.
   */
  export type Mode = 'closed' | 'list' | 'view';

  /**
   * A conversation opened read-only.
   */
  export interface IViewing {
    conversation: IConversation;
    turns: ITurn[];
  }
}

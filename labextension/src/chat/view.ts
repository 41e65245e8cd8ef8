// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import type { TranslationBundle } from '@jupyterlab/translation';
import { caretLeftIcon, historyIcon } from '@jupyterlab/ui-components';
import { Message } from '@lumino/messaging';
import { Panel, Widget } from '@lumino/widgets';

import type { ContextModel } from '../contextmodel';
import { element, iconButton } from '../dom';
import { HiddenChars } from '../hiddenchars';
import type { ICellLinks } from '../reveal';
import { Visible } from '../visible';
import type { ArchiveModel } from './archive';
import { ArchiveListView } from './archiveview';
import { Composer } from './composer';
import type { MentionSource } from './mentionsource';
import { MessagesView } from './messages';
import type { ChatModel } from './model';

import '../../style/chat.css';

/**
 * The chat of the side panel, `.jp-Copilot-Chat` with `data-state`
 * (`idle` or `running`), `data-conversation-id` and `data-view` (`current`,
 * `list` or `archived`): a header with Back `.jp-Copilot-Back`, the title
 * and the earlier conversations `.jp-Copilot-Archive`; the messages; the
 * composer. An earlier conversation opens read-only, without composer.
 *
 * This module is loaded on demand, in its own chunk.
 */
export class ChatView extends Panel {
  /**
   * Create the chat and start loading the agents.
   */
  constructor(options: ChatView.IOptions) {
    super();
    this.addClass('jp-Copilot-Chat');
    this._context = options.context;
    const trans = (this._trans = options.trans);
    this.model = options.model;
    this.archive = options.archive;
    const header = element('div', 'jp-Copilot-ChatHeader');
    this._back = iconButton('jp-Copilot-Back', caretLeftIcon, trans.__('Back'));
    this._title = element('h3', 'jp-Copilot-ChatTitle');
    this._history = iconButton(
      'jp-Copilot-Archive',
      historyIcon,
      trans.__('Earlier conversations')
    );
    header.append(this._back, this._title, this._history);
    this.addWidget(new Widget({ node: header }));
    this._messages = new MessagesView({
      rendermime: options.rendermime,
      cellLinks: options.cellLinks,
      trans
    });
    this._list = new ArchiveListView(this.archive, trans);
    this._archived = new MessagesView({
      rendermime: options.rendermime,
      cellLinks: options.cellLinks,
      trans
    });
    this._archived.addClass('jp-mod-readonly');
    this.composer = new Composer({
      model: this.model,
      context: options.context,
      cellLabel: options.cellLabel,
      cellLinks: options.cellLinks,
      trans,
      onNewConversation: () => void this.newConversation(),
      mentions: options.mentions ?? null
    });
    for (const w of [
      this._messages,
      this._list,
      this._archived,
      this.composer
    ]) {
      this.addWidget(w);
    }
    this._back.addEventListener('click', this._onBack);
    this._history.addEventListener('click', this._onHistory);
    this.model.changed.connect(this._render, this);
    this.model.turnChanged.connect(this._onTurn, this);
    this.archive.changed.connect(this._render, this);
    this._render();
    void this.model.load();
  }

  /** The current conversation. */
  readonly model: ChatModel;

  /** The earlier conversations. */
  readonly archive: ArchiveModel;

  /** Where the person writes. */
  readonly composer: Composer;

  /**
   * Archive the current conversation (when it has messages) and start a new
   * one. After the context has refreshed, put `prefill` in the composer,
   * unsent, and focus it.
   *
   * @returns `false` when the current conversation could not be archived.
   */
  async newConversation(prefill?: string): Promise<boolean> {
    this.archive.close();
    await this.model.load();
    if (!(await this.model.newConversation())) {
      return false;
    }
    await this._context.refresh();
    if (prefill !== undefined) {
      this.composer.setDraft(prefill);
    }
    this.composer.focusInput();
    return true;
  }

  /**
   * Show the current conversation and focus the composer.
   */
  showCurrent(): void {
    this.archive.close();
    this.composer.focusInput();
  }

  /**
   * Disconnect from the models; they belong to the plugin and stay.
   */
  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._back.removeEventListener('click', this._onBack);
    this._history.removeEventListener('click', this._onHistory);
    this.model.changed.disconnect(this._render, this);
    this.model.turnChanged.disconnect(this._onTurn, this);
    this.archive.changed.disconnect(this._render, this);
    super.dispose();
  }

  /**
   * Try loading the agents again when they failed to load.
   */
  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    void this.model.load();
  }

  private _onBack = (): void => {
    this.archive.back();
    if (this.archive.mode === 'closed') {
      this.composer.focusInput();
    }
  };

  private _onHistory = (): void => {
    if (this.archive.mode === 'closed') {
      void this.archive.openList(this.model.conversation?.id ?? null);
    } else {
      this.archive.close();
    }
  };

  private _onTurn(model: ChatModel, index: number): void {
    if (index < 0) {
      this._messages.setTurns(model.turns);
    } else {
      this._messages.updateTurn(index, model.turns);
    }
  }

  private _render(): void {
    const { conversation, isRunning, catalog, settings } = this.model;
    const trans = this._trans;
    const mode = this.archive.mode;
    const viewing = this.archive.viewing;
    const d = this.node.dataset;
    d.state = isRunning ? 'running' : 'idle';
    d.conversationId = conversation?.id ?? '';
    d.view =
      mode === 'closed' ? 'current' : mode === 'list' ? 'list' : 'archived';
    this._messages.setHidden(mode !== 'closed');
    this.composer.setHidden(mode !== 'closed');
    this._list.setHidden(mode !== 'list');
    this._archived.setHidden(mode !== 'view');
    this._back.hidden = mode === 'closed';
    this._history.setAttribute('aria-pressed', String(mode !== 'closed'));
    if (mode === 'view') {
      this._archived.emptyText =
        this.archive.message ||
        (viewing ? trans.__('No messages.') : trans.__('Loading…'));
      if (viewing !== this._shownArchived) {
        this._shownArchived = viewing;
        this._archived.setTurns(viewing?.turns ?? []);
      }
    }
    // A conversation's title is its first message: hidden characters as
    // escapes, as in the message.
    const title =
      mode === 'list'
        ? trans.__('Earlier conversations')
        : mode === 'view'
          ? trans.__(
              '%1 (read only)',
              viewing?.conversation.title || trans.__('Conversation')
            )
          : conversation?.title || trans.__('New conversation');
    Visible.setText(this._title, title, Visible.titles(trans));
    this._title.title = HiddenChars.escaped(title);
    const agent = catalog?.agents.find(a => a.id === settings.agentId);
    this._messages.emptyText = !catalog
      ? this.model.notice || trans.__('Loading the agents…')
      : agent
        ? trans.__(
            'Ask %1 about your notebook. Attach a cell to talk about it; under Context you choose what else the agent may read.',
            agent.label
          )
        : trans.__('No agent is available on this server.');
  }

  private _context: ContextModel;
  private _trans: TranslationBundle;
  private _back: HTMLButtonElement;
  private _title: HTMLElement;
  private _history: HTMLButtonElement;
  private _messages: MessagesView;
  private _list: ArchiveListView;
  private _archived: MessagesView;
  private _shownArchived: ArchiveModel.IViewing | null = null;
}

/**
 * The types of the chat view.
 */
export namespace ChatView {
  /**
   * The options of the chat view.
   */
  export interface IOptions {
    /** The current conversation. */
    model: ChatModel;
    /** The earlier conversations. */
    archive: ArchiveModel;
    /** The context model that holds the attached cell. */
    context: ContextModel;
    /** The name of an attached cell, e.g. "Cell 3". */
    cellLabel: (attachment: ContextModel.IAttachment) => string;
    /** Links to the cells the messages mention by id. */
    cellLinks: ICellLinks;
    /** JupyterLab's renderers, for the agent's Markdown; plain text without. */
    rendermime: IRenderMimeRegistry | null;
    /** The words of the panel, in the person's language. */
    trans: TranslationBundle;
    /** What `@` in the composer offers; none: `@` is plain text. */
    mentions?: MentionSource | null;
  }
}

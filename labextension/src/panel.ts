// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import { JupyterFrontEnd } from '@jupyterlab/application';
import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import type { TranslationBundle } from '@jupyterlab/translation';
import { SidePanel } from '@jupyterlab/ui-components';
import { Message } from '@lumino/messaging';
import { Panel, Widget } from '@lumino/widgets';

import type { ApprovalModel } from './approvals/model';
import { ApprovalsView } from './approvals/view';
import type { ArchiveModel } from './chat/archive';
import type { ChatModel } from './chat/model';
import type { ChatView } from './chat/view';
import type { ContextModel } from './contextmodel';
import { ContextView } from './contextview';
import { copilotIcon } from './icons';
import { IPageState } from './livestate';
import type { Preferences } from './preferences';
import type { ICellLinks } from './reveal';
import { PageStateTracker } from './state';

/**
 * The Copilot side panel: the approval cards on top (only while a tool call
 * waits for the person), the context section and, below them, the chat.
 * The chat's code is loaded in its own chunk when the panel is first shown
 * or a command needs it, which keeps it out of JupyterLab's start.
 */
export class CopilotPanel extends SidePanel {
  /**
   * Create the panel of this page.
   */
  constructor(options: CopilotPanel.IOptions) {
    super({ content: new Panel() });
    const trans = options.trans;
    this.id = CopilotPanel.ID;
    this.addClass('jp-Copilot-Panel');
    this.title.icon = copilotIcon;
    this.title.caption = trans.__('Copilot');
    this.node.dataset.pageId = options.pageId;

    this.model = options.context;
    const header = new Widget();
    header.addClass('jp-Copilot-Header');
    header.node.textContent = trans.__('Copilot');
    this.header.addWidget(header);

    this.approvals = options.approvals;
    this.approvals.added.connect(this._onApprovalAdded, this);
    this._shell = options.shell;
    this.addWidget(new ApprovalsView(this.approvals, trans));
    this.addWidget(new ContextView(this.model, trans));
    this._options = options;
    this.conversation = new Panel();
    this.conversation.addClass('jp-Copilot-Conversation');
    this.conversation.node.setAttribute('role', 'region');
    this.conversation.node.setAttribute('aria-label', trans.__('Conversation'));
    this.addWidget(this.conversation);

    this._tracker = options.tracker;
    this._tracker.stateSent.connect(this._onStateSent, this);
    this._tracker.flushed.connect(this._onFlushed, this);
  }

  /**
   * The id of the panel in the shell.
   */
  static readonly ID = 'jupyter-copilot-panel';

  /**
   * The context shown in the panel and the attachment.
   */
  readonly model: ContextModel;

  /**
   * The approval requests shown as cards.
   */
  readonly approvals: ApprovalModel;

  /**
   * The conversation area, which holds the chat once it is loaded.
   */
  readonly conversation: Panel;

  /**
   * The chat, loading it on first use.
   *
   * @returns The chat, or `null` when its code cannot be loaded.
   */
  chat(): Promise<ChatView | null> {
    this._chat ??= import('./chat/view')
      .then(({ ChatView }) => {
        if (this.isDisposed) {
          return null;
        }
        const view = new ChatView({
          model: this._options.chat,
          archive: this._options.archive,
          context: this.model,
          cellLabel: this._options.cellLabel,
          cellLinks: this._options.cellLinks,
          rendermime: this._options.rendermime ?? null,
          trans: this._options.trans
        });
        this.conversation.addWidget(view);
        return view;
      })
      .catch(() => {
        this._chat = null;
        this.conversation.node.dataset.loadError = 'true';
        return null;
      });
    return this._chat;
  }

  /**
   * Make the panel visible in its side area, without moving the keyboard
   * focus.
   *
   * `LabShell.activateById` selects the panel's tab (which expands a
   * collapsed side area) and then calls `activate()` on the panel. In
   * JupyterLab 4.6 neither step moves the focus for a `SidePanel`, whose
   * activate request does nothing; but `expandRight()` would activate
   * whichever panel was last open there, which may take the focus. So the
   * panel is activated by id and marks that activation as quiet: its own
   * `onActivateRequest` then does nothing, whatever a later version of this
   * panel (a conversation input, say) does when the person activates it.
   */
  reveal(): void {
    if (this.isVisible || this.isDisposed) {
      return;
    }
    this._quietActivation = true;
    this._shell.activateById(this.id);
    // The activate request is handled in the message loop's next frame; should
    // none come (the panel is not in a side area), the mark must not linger.
    requestAnimationFrame(() => (this._quietActivation = false));
  }

  /**
   * Disconnect from the tracker and the models; the models stay, as they
   * belong to the plugin.
   */
  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._tracker.stateSent.disconnect(this._onStateSent, this);
    this._tracker.flushed.disconnect(this._onFlushed, this);
    this.approvals.added.disconnect(this._onApprovalAdded, this);
    super.dispose();
  }

  /**
   * Refresh the context whenever the panel becomes visible.
   */
  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    // Before the page's first state message the server does not know this page
    // yet; that message triggers the first refresh itself.
    if (this._tracker.stats.sent > 0) {
      void this.model.refresh();
    }
    void this.chat();
  }

  /**
   * Let a quiet activation (see {@link reveal}) leave the focus alone.
   */
  protected onActivateRequest(msg: Message): void {
    if (this._quietActivation) {
      this._quietActivation = false;
      return;
    }
    super.onActivateRequest(msg);
  }

  /**
   * Show a new card to the person, who may have the panel collapsed,
   * unless their preferences say to leave the panel as it is.
   */
  private _onApprovalAdded(): void {
    if (this._options.preferences?.values.openPanelOnApproval ?? true) {
      this.reveal();
    }
  }

  private _onStateSent(_: PageStateTracker, __: IPageState): void {
    this.model.scheduleRefresh();
  }

  /**
   * Mirror the tracker's counters on the root node for browser tests.
   */
  private _onFlushed(
    _: PageStateTracker,
    stats: PageStateTracker.IStats
  ): void {
    const d = this.node.dataset;
    d.stateChanges = String(stats.changes);
    d.stateSent = String(stats.sent);
    d.stateDeduplicated = String(stats.deduplicated);
    d.notebookWatchers = String(stats.watchers);
  }

  private _tracker: PageStateTracker;
  private _shell: JupyterFrontEnd.IShell;
  private _options: CopilotPanel.IOptions;
  private _chat: Promise<ChatView | null> | null = null;
  private _quietActivation = false;
}

/**
 * The types of the Copilot panel.
 */
export namespace CopilotPanel {
  /**
   * The options of the panel.
   */
  export interface IOptions {
    /** The id of this page. */
    pageId: string;
    /** The tracker whose `state` messages trigger refreshes. */
    tracker: PageStateTracker;
    /** The context shown in the panel and the attachment. */
    context: ContextModel;
    /** The approval requests shown as cards. */
    approvals: ApprovalModel;
    /** The current conversation, shown once the chat's code is loaded. */
    chat: ChatModel;
    /** The earlier conversations. */
    archive: ArchiveModel;
    /** The name of an attached cell, e.g. "Code cell 3". */
    cellLabel: (attachment: ContextModel.IAttachment) => string;
    /** Links to the cells the chat mentions by id. */
    cellLinks: ICellLinks;
    /** The application shell, to reveal the panel for a new approval. */
    shell: JupyterFrontEnd.IShell;
    /** JupyterLab's renderers, for the agent's Markdown; plain text without. */
    rendermime?: IRenderMimeRegistry | null;
    /** The words of the panel, in the person's language. */
    trans: TranslationBundle;
    /** The person's preferences, e.g. whether a new card shows the panel. */
    preferences?: Preferences | null;
  }
}

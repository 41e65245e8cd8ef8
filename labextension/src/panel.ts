// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import { JupyterFrontEnd } from '@jupyterlab/application';
import { INotebookTracker } from '@jupyterlab/notebook';
import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { ServerConnection } from '@jupyterlab/services';
import { SidePanel } from '@jupyterlab/ui-components';
import { Message } from '@lumino/messaging';
import { Panel, Widget } from '@lumino/widgets';

import { ApprovalModel } from './approvals/model';
import { ApprovalsView } from './approvals/view';
import { Bridge } from './bridge';
import type { ChatView } from './chat/view';
import { ContextModel } from './contextmodel';
import { ContextView } from './contextview';
import { copilotIcon } from './icons';
import { IPageState } from './livestate';
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
    this.id = CopilotPanel.ID;
    this.addClass('jp-Copilot-Panel');
    this.title.icon = copilotIcon;
    this.title.caption = 'Copilot';
    this.node.dataset.pageId = options.pageId;

    this.model = new ContextModel({
      pageId: options.pageId,
      serverSettings: options.serverSettings
    });
    const header = new Widget();
    header.addClass('jp-Copilot-Header');
    header.node.textContent = 'Copilot';
    this.header.addWidget(header);

    this.approvals = new ApprovalModel({
      bridge: options.bridge,
      notebooks: options.notebooks,
      serverSettings: options.serverSettings
    });
    this.approvals.added.connect(this._onApprovalAdded, this);
    this._shell = options.shell;
    this.addWidget(new ApprovalsView(this.approvals));
    this.addWidget(new ContextView(this.model));
    this._options = options;
    this.conversation = new Panel();
    this.conversation.addClass('jp-Copilot-Conversation');
    this.conversation.node.setAttribute('role', 'region');
    this.conversation.node.setAttribute('aria-label', 'Conversation');
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
          pageId: this.node.dataset.pageId!,
          context: this.model,
          cellLabel: a => Private.cellLabel(this._options.notebooks, a),
          rendermime: this._options.rendermime ?? null,
          serverSettings: this._options.serverSettings
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
   * Disconnect from the tracker and dispose the model.
   */
  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._tracker.stateSent.disconnect(this._onStateSent, this);
    this._tracker.flushed.disconnect(this._onFlushed, this);
    this.approvals.added.disconnect(this._onApprovalAdded, this);
    this.approvals.dispose();
    this.model.dispose();
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
      this.model.scheduleRefresh(0);
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
   * Show a new card to the person, who may have the panel collapsed.
   */
  private _onApprovalAdded(): void {
    this.reveal();
  }

  private _onStateSent(_: PageStateTracker, __: IPageState): void {
    this.model.scheduleRefresh();
  }

  /**
   * Mirror the tracker's counters on the root node for browser tests.
   */
  private _onFlushed(_: PageStateTracker, stats: PageStateTracker.IStats): void {
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
    /** The server settings; the defaults when omitted. */
    serverSettings?: ServerConnection.ISettings;
    /** The page bridge, for approval requests. */
    bridge: Bridge;
    /** The open notebooks, to name an approval's target cell. */
    notebooks: INotebookTracker;
    /** The application shell, to reveal the panel for a new approval. */
    shell: JupyterFrontEnd.IShell;
    /** JupyterLab's renderers, for the agent's Markdown; plain text without. */
    rendermime?: IRenderMimeRegistry | null;
  }
}

namespace Private {
  /**
   * "Code cell 3" or "Markdown cell 3" for an attached cell of an open
   * notebook, as the server names it; else "Attached cell".
   */
  export function cellLabel(notebooks: INotebookTracker, a: ContextModel.IAttachment): string {
    // The current notebook first: a copied notebook repeats cell ids.
    const panels = [notebooks.currentWidget];
    notebooks.forEach(panel => void panels.push(panel));
    for (const panel of panels) {
      const cells = panel?.model?.cells;
      for (let i = 0; cells && i < cells.length; i++) {
        const cell = cells.get(i);
        if (cell.id === a.cellId) {
          return `${cell.type === 'markdown' ? 'Markdown' : 'Code'} cell ${i + 1}`;
        }
      }
    }
    return 'Attached cell';
  }
}

// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import { ServerConnection } from '@jupyterlab/services';
import { SidePanel } from '@jupyterlab/ui-components';
import { Message } from '@lumino/messaging';
import { Panel, Widget } from '@lumino/widgets';

import { ContextModel } from './contextmodel';
import { ContextView } from './contextview';
import { copilotIcon } from './icons';
import { IPageState } from './livestate';
import { PageStateTracker } from './state';

/**
 * The Copilot side panel: the context section on top and, below it, the
 * conversation area that a later issue fills.
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

    this.addWidget(new ContextView(this.model));
    this.conversation = new Widget();
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
   * The conversation area, empty until a later issue fills it.
   */
  readonly conversation: Widget;

  /**
   * Disconnect from the tracker and dispose the model.
   */
  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._tracker.stateSent.disconnect(this._onStateSent, this);
    this._tracker.flushed.disconnect(this._onFlushed, this);
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
  }
}

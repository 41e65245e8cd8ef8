// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import { JupyterFrontEnd } from '@jupyterlab/application';
import type { TranslationBundle } from '@jupyterlab/translation';
import { SidePanel } from '@jupyterlab/ui-components';
import { Message } from '@lumino/messaging';
import { Panel, Widget } from '@lumino/widgets';

import type { ChatView } from './chat/view';
import { copilotIcon } from './icons';
import { IPageState } from './livestate';
import type { IPanelParts } from './parts';
import { PageStateTracker } from './state';

/**
 * The Copilot side panel. At JupyterLab's start it is only its tab and
 * header: what it shows (the approval cards on top, only while a tool call
 * waits for the person; the changes of the turn; the context section; the
 * chat) loads on first use, when the panel is first shown, a card or a
 * review comes, or a command needs it. That keeps it out of the start bundle.
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
    const header = new Widget();
    header.addClass('jp-Copilot-Header');
    header.node.textContent = trans.__('Copilot');
    this.header.addWidget(header);

    this._options = options;
    this._shell = options.shell;
    this._tracker = options.tracker;
    this._tracker.stateSent.connect(this._onStateSent, this);
    this._tracker.flushed.connect(this._onFlushed, this);
  }

  /**
   * The id of the panel in the shell.
   */
  static readonly ID = 'jupyter-copilot-panel';

  /**
   * The parts of the page that load on first use, loading them now.
   *
   * @returns The parts, or `null` when their code cannot be loaded.
   */
  parts(): Promise<IPanelParts | null> {
    this._parts ??= this._options
      .load()
      .then(parts => {
        if (this.isDisposed) {
          return null;
        }
        this._loaded = parts;
        delete this.node.dataset.loadError;
        return parts;
      })
      .catch(() => {
        this._parts = null;
        this.node.dataset.loadError = 'true';
        return null;
      });
    return this._parts;
  }

  /**
   * The chat, loading it (and the parts) on first use.
   *
   * @returns The chat, or `null` when its code cannot be loaded.
   */
  async chat(): Promise<ChatView | null> {
    const parts = await this.parts();
    return parts ? parts.chatView() : null;
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
   * Disconnect from the tracker and the parts; the parts stay, as they
   * belong to the plugin.
   */
  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._tracker.stateSent.disconnect(this._onStateSent, this);
    this._tracker.flushed.disconnect(this._onFlushed, this);
    super.dispose();
  }

  /**
   * Load the parts and the chat when the panel is first shown, and refresh
   * the context whenever it becomes visible.
   */
  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    // Before the page's first state message the server does not know this page
    // yet; that message triggers the first refresh itself.
    if (this._loaded && this._tracker.stats.sent > 0) {
      void this._loaded.context.refresh();
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

  private _onStateSent(_: PageStateTracker, __: IPageState): void {
    this._loaded?.context.scheduleRefresh();
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
  private _parts: Promise<IPanelParts | null> | null = null;
  private _loaded: IPanelParts | null = null;
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
    /** The application shell, to reveal the panel for a new approval. */
    shell: JupyterFrontEnd.IShell;
    /** The words of the panel, in the person's language. */
    trans: TranslationBundle;
    /** Load the parts that fill the panel, once. */
    load: () => Promise<IPanelParts>;
  }
}

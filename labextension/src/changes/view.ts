// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import type { JupyterFrontEnd } from '@jupyterlab/application';
import { PathExt } from '@jupyterlab/coreutils';
import type { INotebookTracker } from '@jupyterlab/notebook';
import type { TranslationBundle } from '@jupyterlab/translation';
import { Widget } from '@lumino/widgets';

import type { ChatModel } from '../chat/model';
import { element, styledButton } from '../dom';
import { cellPosition, revealCell } from '../reveal';
import type { ReviewManager } from '../review/manager';
import { Visible } from '../visible';
import { IChange, openCallIds, stateText, turnChanges } from './list';

/**
 * The "Changes" section of the Copilot panel: the reviews the current turn
 * opened (cell, kind, state), each a link to its cell, with Keep all and
 * Undo all for those still open. Before the first turn of the panel's
 * conversation it lists every review the page opened (the last ones
 * decided, and all open ones): an outside MCP client's too. A review the
 * list showed stays in it once decided, until the next turn starts. The
 * reviews that were open when the page reloaded come first, in the state
 * `reloaded` (nothing was applied). Keep all keeps each review as its own
 * Keep button would, so one whose cell changed applies nothing and says
 * so; it leaves the notebook where the person is.
 *
 * DOM hooks: `.jp-Copilot-Changes` (hidden while empty), one
 * `.jp-Copilot-Change[data-call-id][data-kind][data-state]` per review with
 * its link `.jp-Copilot-ChangeLink` and `.jp-Copilot-ChangeState`, and the
 * buttons `.jp-Copilot-KeepAll` and `.jp-Copilot-UndoAll`. A notebook's
 * name shows its hidden characters as escapes (see {@link Visible}).
 */
export class ChangesView extends Widget {
  constructor(options: ChangesView.IOptions) {
    super();
    this._reviews = options.reviews;
    this._chat = options.chat;
    this._notebooks = options.notebooks;
    this._shell = options.shell;
    this._trans = options.trans;
    this._ended = options.ended ?? [];
    const trans = this._trans;
    this._titles = Visible.titles(trans);
    this.addClass('jp-Copilot-Changes');
    this.node.setAttribute('role', 'region');
    this.node.setAttribute('aria-label', trans.__('Changes'));
    this._list = element('ul', 'jp-Copilot-ChangeList');
    this._keepAll = styledButton(
      'jp-mod-accept jp-Copilot-KeepAll',
      trans.__('Keep all')
    );
    this._undoAll = styledButton(
      'jp-mod-reject jp-Copilot-UndoAll',
      trans.__('Undo all')
    );
    this._undoAll.title = trans.__('Undo every open change.');
    const actions = element('div', 'jp-Copilot-ChangeActions');
    actions.append(this._keepAll, this._undoAll);
    this.node.append(
      element('h3', 'jp-Copilot-SectionTitle', trans.__('Changes')),
      this._list,
      actions
    );
    this.node.addEventListener('click', this);
    this.node.addEventListener('mousedown', this);
    this._reviews.changed.connect(this._render, this);
    this._chat.changed.connect(this._onChat, this);
    this._notebooks.currentChanged.connect(this._onCurrentNotebook, this);
    this._onCurrentNotebook();
  }

  /**
   * Handle clicks on the links and buttons.
   */
  handleEvent(event: Event): void {
    const target = event.target as Element;
    const button = target.closest('button');
    if (!button) {
      return;
    }
    const all = button === this._keepAll || button === this._undoAll;
    if (event.type === 'mousedown') {
      // A click on Keep all or Undo all leaves the focus where the person
      // was, typing in a cell, say.
      if (all) {
        event.preventDefault();
      }
      return;
    }
    const ids = openCallIds(this._changes);
    if (button === this._keepAll) {
      this._reviews.keepAll(ids);
    } else if (button === this._undoAll) {
      this._reviews.undoAll(ids);
    } else if (button.classList.contains('jp-Copilot-ChangeLink')) {
      const item = button.closest<HTMLElement>('.jp-Copilot-Change');
      const change = this._changes.find(c => c.callId === item?.dataset.callId);
      if (change && !this._reviews.reveal(change.callId) && change.cellId) {
        revealCell(this._shell, this._notebooks, change.path, change.cellId);
      }
    }
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this.node.removeEventListener('click', this);
    this.node.removeEventListener('mousedown', this);
    this._reviews.changed.disconnect(this._render, this);
    this._chat.changed.disconnect(this._onChat, this);
    this._notebooks.currentChanged.disconnect(this._onCurrentNotebook, this);
    super.dispose();
  }

  /**
   * Name the cells of the notebook in front, again once its cells are
   * loaded (after a reload, say).
   */
  private _onCurrentNotebook(): void {
    this._render();
    void this._notebooks.currentWidget?.context.ready.then(() => {
      if (!this.isDisposed) {
        this._render();
      }
    });
  }

  /**
   * A turn starts when the chat starts running: from then on the list
   * shows what that turn opens.
   */
  private _onChat(): void {
    const running = this._chat.isRunning;
    if (running && !this._running) {
      this._since = performance.now();
      // A new turn: the list starts anew, the earlier page's reviews too.
      this._shown.clear();
      this._ended = [];
      this._render();
    }
    this._running = running;
  }

  private _render(): void {
    const current = turnChanges(
      this._reviews.entries(),
      this._since,
      this._shown
    );
    current.forEach(c => this._shown.add(c.callId));
    this._changes = [...this._ended, ...current];
    const trans = this._trans;
    this._list.replaceChildren(
      ...this._changes.map(change => this._item(change))
    );
    const open = openCallIds(this._changes).length;
    const active = document.activeElement;
    const hadFocus = active === this._keepAll || active === this._undoAll;
    this._keepAll.hidden = this._undoAll.hidden = open === 0;
    if (hadFocus && open === 0) {
      // Pressed from the keyboard: the buttons are gone, the list keeps the
      // focus.
      this._list.querySelector<HTMLElement>('button')?.focus();
    }
    this.setHidden(this._changes.length === 0);
    this.node.dataset.open = String(open);
    this._keepAll.textContent = trans.__('Keep all (%1)', open);
    // As each review's own Keep: disabled while tool edits are turned off.
    this._keepAll.disabled = !this._reviews.canKeep;
    this._keepAll.title = this._reviews.canKeep
      ? trans.__(
          'Keep every open change; a change whose cell changed applies nothing.'
        )
      : trans.__(
          'Copilot edits were turned off by the administrator; Undo still works.'
        );
  }

  private _item(change: IChange): HTMLElement {
    const trans = this._trans;
    const item = element('li', 'jp-Copilot-Change');
    item.dataset.callId = change.callId;
    item.dataset.kind = change.kind;
    item.dataset.state = change.state;
    const name = PathExt.basename(change.path);
    const at = change.cellId
      ? cellPosition(this._notebooks, change.path, change.cellId)
      : null;
    let label: string;
    if (change.kind === 'insert') {
      label =
        change.cellId === null
          ? trans.__('New cell at the top of %1', name)
          : at
            ? trans.__('New cell after cell %1 in %2', at.index + 1, name)
            : trans.__('New cell in %1', name);
    } else {
      label = at
        ? trans.__('Edit of cell %1 in %2', at.index + 1, name)
        : trans.__('Edit of a cell in %1', name);
    }
    const link = styledButton('jp-Copilot-CellLink jp-Copilot-ChangeLink', '');
    // The notebook's name is the agent's choice: hidden characters as escapes.
    Visible.setText(link, label, this._titles);
    link.title = trans.__('Show this change in its notebook');
    item.append(
      link,
      element('span', 'jp-Copilot-ChangeState', stateText(change.state, trans))
    );
    return item;
  }

  private _reviews: ReviewManager;
  private _chat: ChatModel;
  private _notebooks: INotebookTracker;
  private _shell: JupyterFrontEnd.IShell;
  private _trans: TranslationBundle;
  private _titles: Visible.Titles;
  private _list: HTMLElement;
  private _keepAll: HTMLButtonElement;
  private _undoAll: HTMLButtonElement;
  private _changes: IChange[] = [];
  /** The reviews left open by the page before this one (reloaded.ts). */
  private _ended: IChange[];
  /** What the list showed in this turn, kept once decided. */
  private _shown = new Set<string>();
  /** When the current turn started; before any turn, the page's start. */
  private _since = 0;
  private _running = false;
}

/**
 * The types of the changes view.
 */
export namespace ChangesView {
  export interface IOptions {
    /** The reviews of this page. */
    reviews: ReviewManager;
    /** The chat, whose turns start the list anew. */
    chat: ChatModel;
    notebooks: INotebookTracker;
    shell: JupyterFrontEnd.IShell;
    trans: TranslationBundle;
    /**
     * The reviews that were open when the page reloaded, shown until the
     * next turn starts.
     */
    ended?: IChange[];
  }
}

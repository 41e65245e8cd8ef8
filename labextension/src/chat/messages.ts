// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import type { TranslationBundle } from '@jupyterlab/translation';
import { Panel, Widget } from '@lumino/widgets';

import { element, styledButton } from '../dom';
import type { ICellLinks } from '../reveal';
import { Visible } from '../visible';
import { ReplyView } from './reply';
import { ToolCard } from './toolcard';
import { endNotice, INotice, ITurn, usageText } from './transcript';

/**
 * The messages of a conversation, oldest first: per turn the person's
 * message `.jp-Copilot-Message[data-role=user]` and the agent's
 * `.jp-Copilot-Message[data-role=agent][data-state]` (`running`, `done`,
 * `stopped` or `error`) with its tool cards, the server's notices of the
 * turn (`.jp-Copilot-Notices > .jp-Copilot-Notice`, in order), its reply
 * and end notice `.jp-Copilot-TurnNotice[data-level]`. It keeps to the
 * bottom while the person has not scrolled up.
 */
export class MessagesView extends Panel {
  /**
   * Create an empty list.
   */
  constructor(options: MessagesView.IOptions) {
    super();
    this._rendermime = options.rendermime;
    this._links = options.cellLinks;
    this._trans = options.trans;
    this.addClass('jp-Copilot-Messages');
    this.node.setAttribute('role', 'log');
    this.node.setAttribute('aria-label', this._trans.__('Messages'));
    this.node.tabIndex = 0;
    this._empty = new Widget({ node: element('div', 'jp-Copilot-ChatEmpty') });
    this.addWidget(this._empty);
    this.node.addEventListener('scroll', this._onScroll, { passive: true });
    this._observer = new MutationObserver(
      () => this._stick && this._toBottom()
    );
    this._observer.observe(this.node, {
      childList: true,
      subtree: true,
      characterData: true
    });
    // The list also shrinks and grows with what the panel shows above and
    // below it (an approval card comes or goes, the composer grows): at
    // the bottom it stays at the bottom, with no change of its own.
    this._resizes = new ResizeObserver(() => this._stick && this._toBottom());
    this._resizes.observe(this.node);
  }

  /**
   * Set what the list says while it has no message.
   */
  set emptyText(text: string) {
    this._empty.node.textContent = text;
  }

  /**
   * Show these turns instead of the current ones.
   */
  setTurns(turns: readonly ITurn[]): void {
    this._turns.forEach(t => t.dispose());
    this._turns = [];
    turns.forEach((_, i) => this.updateTurn(i, turns));
    this._empty.setHidden(turns.length > 0);
    this._stick = true;
    this._toBottom();
  }

  /**
   * Show turn `index` of `turns`, adding it when it is new.
   */
  updateTurn(index: number, turns: readonly ITurn[]): void {
    let view = this._turns[index];
    if (!view) {
      view = new Private.TurnView(
        turns[index],
        this._rendermime,
        this._links,
        this._trans
      );
      this._turns[index] = view;
      this.addWidget(view.user);
      this.addWidget(view.agent);
      this._empty.setHidden(true);
      this._stick = true;
    }
    view.update(turns[index]);
  }

  /**
   * Stop observing the list.
   */
  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._observer.disconnect();
    this._resizes.disconnect();
    this.node.removeEventListener('scroll', this._onScroll);
    this._turns.forEach(t => t.dispose());
    super.dispose();
  }

  private _onScroll = (): void => {
    const n = this.node;
    const top = n.scrollTop;
    if (n.scrollHeight - top - n.clientHeight < Private.STICK_PX) {
      this._stick = true;
    } else if (top < this._lastTop) {
      // Only the person scrolls up. The browser scrolls down by itself when
      // the list shrinks (scroll anchoring, as a card comes above it): that
      // must not let go of the bottom.
      this._stick = false;
    }
    this._lastTop = top;
  };

  private _toBottom(): void {
    this.node.scrollTop = this.node.scrollHeight;
  }

  private _rendermime: IRenderMimeRegistry | null;
  private _links: ICellLinks;
  private _trans: TranslationBundle;
  private _empty: Widget;
  private _turns: Private.TurnView[] = [];
  private _observer: MutationObserver;
  private _resizes: ResizeObserver;
  private _stick = true;
  private _lastTop = 0;
}

/**
 * The types of the messages view.
 */
export namespace MessagesView {
  /**
   * The options of a messages view.
   */
  export interface IOptions {
    /** The renderers of the agent's Markdown; plain text without. */
    rendermime: IRenderMimeRegistry | null;
    /** Links to the cells that messages and tool calls name. */
    cellLinks: ICellLinks;
    /** The words of the panel, in the person's language. */
    trans: TranslationBundle;
  }
}

namespace Private {
  /** How close to the bottom counts as "at the bottom", in pixels. */
  export const STICK_PX = 40;

  /**
   * The two messages of one turn.
   */
  export class TurnView {
    constructor(
      turn: ITurn,
      rendermime: IRenderMimeRegistry | null,
      links: ICellLinks,
      trans: TranslationBundle
    ) {
      this._links = links;
      this._trans = trans;
      const u = element('div', 'jp-Copilot-Message');
      u.dataset.role = 'user';
      // The person's own words, shown as the agent receives them: hidden
      // characters (pasted with a text) as escapes.
      const said = element('div', 'jp-Copilot-MessageText');
      Visible.setText(said, turn.user.text, Visible.titles(trans));
      u.append(said);
      const a = turn.user.attachment;
      if (a) {
        const label = a.label || trans.__('Cell');
        // A link to the cell, as long as an open notebook has it.
        const chip = styledButton(
          'jp-Copilot-CellLink jp-Copilot-AttachmentChip',
          label
        );
        chip.dataset.cellId = a.cellId;
        chip.title = trans.__('%1 was attached to this message', label);
        chip.addEventListener('click', () => void links.reveal(a.cellId));
        u.append(chip);
      }
      this.user = new Widget({ node: u });
      this.agent = new Panel();
      this.agent.addClass('jp-Copilot-Message');
      this.agent.node.dataset.role = 'agent';
      this._restarted = new Widget({
        node: element(
          'div',
          'jp-Copilot-TurnNotice',
          trans.__(
            'The agent had stopped and was started again: it does not remember the earlier messages.'
          )
        )
      });
      this._restarted.node.dataset.level = 'info';
      this._tools = new Widget({
        node: element('div', 'jp-Copilot-ToolCalls')
      });
      this._notices = new Widget({
        node: element('div', 'jp-Copilot-Notices')
      });
      this._reply = new ReplyView(rendermime);
      this._footer = new Widget({
        node: element('div', 'jp-Copilot-TurnFooter')
      });
      this.agent.addWidget(this._restarted);
      this.agent.addWidget(this._tools);
      // Notices are kept as a list, without their place in the reply's
      // Markdown (a saved turn has none): they follow the tool calls that
      // cause them, and come before the text.
      this.agent.addWidget(this._notices);
      this.agent.addWidget(this._reply);
      this.agent.addWidget(this._footer);
    }

    readonly user: Widget;
    readonly agent: Panel;

    update(turn: ITurn): void {
      const running = turn.stopReason === null;
      const notice = endNotice(turn, this._trans);
      const ended = !notice
        ? 'done'
        : notice.level === 'error'
          ? 'error'
          : 'stopped';
      const state = running ? 'running' : ended;
      const node = this.agent.node;
      node.dataset.state = state;
      node.setAttribute('aria-busy', String(running));
      for (const call of turn.toolCalls) {
        let card = this._cards.get(call.toolCallId);
        if (!card) {
          card = ToolCard.create(call.toolCallId, this._trans);
          this._cards.set(call.toolCallId, card);
          this._tools.node.append(card);
        }
        ToolCard.update(card, call, this._links, this._trans);
      }
      this._restarted.setHidden(!turn.restarted);
      this._tools.setHidden(turn.toolCalls.length === 0);
      this._renderNotices(turn.notices ?? []);
      this._reply.setText(turn.reply, running);
      this._renderFooter(turn, running, notice);
    }

    dispose(): void {
      this.user.dispose();
      this.agent.dispose();
    }

    /**
     * Add the notices not shown yet; a turn's notices only ever grow.
     */
    private _renderNotices(notices: readonly string[]): void {
      const list = this._notices.node;
      if (list.childElementCount > notices.length) {
        list.replaceChildren();
      }
      // A notice quotes the agent (a path, a title): hidden characters as
      // escapes.
      const titles = Visible.titles(this._trans);
      for (const text of notices.slice(list.childElementCount)) {
        const node = element('div', 'jp-Copilot-Notice');
        Visible.setText(node, text, titles);
        list.append(node);
      }
      this._notices.setHidden(notices.length === 0);
    }

    private _renderFooter(
      turn: ITurn,
      running: boolean,
      notice: INotice | null
    ): void {
      const quiet =
        turn.reply !== '' ||
        turn.toolCalls.length > 0 ||
        (turn.notices?.length ?? 0) > 0;
      const key = running
        ? `running:${quiet}`
        : `${turn.stopReason}:${turn.usage?.conversationOutputTokens ?? ''}`;
      if (key === this._footerKey) {
        return;
      }
      this._footerKey = key;
      const f = this._footer.node;
      f.replaceChildren();
      if (running) {
        const working = element(
          'span',
          'jp-Copilot-Working',
          quiet ? '' : this._trans.__('Working…')
        );
        working.setAttribute('role', 'status');
        working.setAttribute(
          'aria-label',
          this._trans.__('The agent is working')
        );
        f.append(working);
      } else if (notice) {
        const box = element('div', 'jp-Copilot-TurnNotice');
        box.dataset.level = notice.level;
        box.setAttribute('role', notice.level === 'error' ? 'alert' : 'status');
        // An error's words may be the agent's: hidden characters as escapes.
        const titles = Visible.titles(this._trans);
        const text = element('span', 'jp-Copilot-TurnNoticeText');
        Visible.setText(text, notice.text, titles);
        box.append(text);
        if (notice.details) {
          const details = element('details', 'jp-Copilot-TurnNoticeDetails');
          const full = element('pre', '');
          Visible.setText(full, notice.details, titles);
          details.append(
            element('summary', '', this._trans.__('Details')),
            full
          );
          box.append(details);
        }
        f.append(box);
      }
      if (!running && turn.usage) {
        f.append(
          element('div', 'jp-Copilot-Usage', usageText(turn.usage, this._trans))
        );
      }
      this._footer.setHidden(f.childElementCount === 0);
    }

    private _trans: TranslationBundle;
    private _restarted: Widget;
    private _tools: Widget;
    private _notices: Widget;
    private _reply: ReplyView;
    private _footer: Widget;
    private _footerKey: string | null = '';
    private _cards = new Map<string, HTMLElement>();
    private _links: ICellLinks;
  }
}

// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import type { TranslationBundle } from '@jupyterlab/translation';
import { Widget } from '@lumino/widgets';

import { element } from '../dom';
import { ApprovalCard } from './card';
import { ApprovalModel } from './model';
import { ApprovalTexts } from './texts';

/**
 * The "Approvals" section of the Copilot panel: one card per tool call that
 * waits for the person, with Allow once and Deny, or with the options an
 * agent offered for its own permission request. Escape inside a card
 * denies. The section is hidden while there is no card, and a new card never
 * takes the keyboard focus.
 */
export class ApprovalsView extends Widget {
  /**
   * Create the view of an approval model.
   */
  constructor(
    model: ApprovalModel,
    trans: TranslationBundle,
    options: ApprovalsView.IOptions = {}
  ) {
    super();
    this._model = model;
    this._trans = trans;
    this._keys = options.keys ?? null;
    this.addClass('jp-Copilot-Approvals');
    this.node.setAttribute('role', 'region');
    this.node.setAttribute('aria-label', trans.__('Approvals'));
    this._list = element('div', 'jp-Copilot-ApprovalList');
    this.node.append(
      element('h3', 'jp-Copilot-SectionTitle', trans.__('Approvals')),
      this._list
    );
    this.node.addEventListener('click', this);
    this.node.addEventListener('keydown', this);
    this.node.addEventListener('focusin', this);
    model.changed.connect(this._render, this);
    this._render();
  }

  /**
   * Handle the DOM events of the cards.
   */
  handleEvent(event: Event): void {
    switch (event.type) {
      case 'click':
        this._onClick(event);
        break;
      case 'keydown':
        this._onKeydown(event as KeyboardEvent);
        break;
      case 'focusin':
        this._onFocusIn(event as FocusEvent);
        break;
    }
  }

  /**
   * Disconnect from the model and the DOM.
   */
  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._model.changed.disconnect(this._render, this);
    this.node.removeEventListener('click', this);
    this.node.removeEventListener('keydown', this);
    this.node.removeEventListener('focusin', this);
    this._nodes.clear();
    this._returnFocus = null;
    super.dispose();
  }

  private _onClick(event: Event): void {
    const button = (event.target as Element).closest('button');
    const id = Private.requestId(button);
    if (!button || !id) {
      return;
    }
    const optionId = button.dataset.optionId;
    if (button.classList.contains('jp-Copilot-ApprovalTarget')) {
      this._model.reveal(id);
    } else if (optionId) {
      void this._model.decide(id, { optionId });
    } else if (button.classList.contains('jp-Copilot-ApprovalAllow')) {
      void this._model.decide(id, 'allow');
    } else if (button.classList.contains('jp-Copilot-ApprovalDeny')) {
      void this._model.decide(id, 'deny');
    }
  }

  private _onKeydown(event: KeyboardEvent): void {
    const id = Private.requestId(event.target as Element);
    if (event.key !== 'Escape' || !id) {
      return;
    }
    event.preventDefault();
    event.stopPropagation();
    void this._model.decide(id, 'deny');
  }

  /**
   * Remember where the focus came from, to give it back after the last card.
   */
  private _onFocusIn(event: FocusEvent): void {
    const from = event.relatedTarget;
    if (from instanceof HTMLElement && !this.node.contains(from)) {
      this._returnFocus = from;
    }
  }

  private _render(): void {
    const cards = this._model.cards;
    const ids = new Set(cards.map(card => card.requestId));
    let hadFocus = false;
    for (const [id, node] of this._nodes) {
      if (!ids.has(id)) {
        hadFocus ||= node.contains(document.activeElement);
        node.remove();
        this._nodes.delete(id);
      }
    }
    for (const card of cards) {
      let node = this._nodes.get(card.requestId);
      if (!node) {
        // Cards only ever join at the end: existing nodes never move, so a
        // focused button keeps its focus.
        node = ApprovalCard.create(card, this._trans, this._hint(card));
        this._nodes.set(card.requestId, node);
        this._list.append(node);
      }
      ApprovalCard.update(node, card, this._trans);
    }
    this.setHidden(cards.length === 0);
    if (hadFocus) {
      this._moveFocus();
    }
  }

  /**
   * The hint of a new card: an edit card names the keys of its review, as
   * bound now (the person may have changed them).
   */
  private _hint(card: ApprovalModel.ICard): string {
    if (card.kind !== 'edit') {
      return '';
    }
    const keys = this._keys?.() ?? { keep: '', undo: '', next: '' };
    return ApprovalTexts.editHint(keys, this._trans);
  }

  /**
   * After a focused card went: focus the next card, or give the focus back
   * to where it was before the person came to the cards.
   */
  private _moveFocus(): void {
    const next = this._list.firstElementChild as HTMLElement | null;
    if (next) {
      next.focus();
      return;
    }
    if (this._returnFocus?.isConnected) {
      this._returnFocus.focus();
    }
    this._returnFocus = null;
  }

  private _model: ApprovalModel;
  private _trans: TranslationBundle;
  private _keys: (() => ApprovalsView.IKeys) | null;
  private _list: HTMLElement;
  private _nodes = new Map<string, HTMLElement>();
  private _returnFocus: HTMLElement | null = null;
}

/**
 * The types of the approvals view.
 */
export namespace ApprovalsView {
  /**
   * The keys of the review commands, formatted for a person; "" when unbound.
   */
  export interface IKeys {
    keep: string;
    undo: string;
    next: string;
  }

  /**
   * The options of an approvals view.
   */
  export interface IOptions {
    /** The keys bound to Keep, Undo and next review, read for each new card. */
    keys?: () => IKeys;
  }
}

namespace Private {
  /**
   * The request id of the card an element is in, or `null`.
   */
  export function requestId(target: Element | null): string | null {
    const card = target?.closest<HTMLElement>('.jp-Copilot-Approval');
    return card?.dataset.requestId ?? null;
  }
}

// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import type { TranslationBundle } from '@jupyterlab/translation';
import { Widget } from '@lumino/widgets';

import { element } from '../dom';
import type { ArchiveModel } from './archive';
import type { IConversation } from '../api';

/**
 * The list of earlier conversations `.jp-Copilot-ArchiveList`, newest
 * first: one button `.jp-Copilot-ArchiveItem[data-conversation-id]` each,
 * which opens it read-only.
 */
export class ArchiveListView extends Widget {
  /**
   * Create the list of an archive model.
   */
  constructor(model: ArchiveModel, trans: TranslationBundle) {
    super();
    this._model = model;
    this._trans = trans;
    this.addClass('jp-Copilot-ArchiveList');
    this.node.setAttribute('role', 'region');
    this.node.setAttribute('aria-label', trans.__('Earlier conversations'));
    this._status = element('p', 'jp-Copilot-ArchiveStatus');
    this._status.setAttribute('role', 'status');
    this._items = element('ul', 'jp-Copilot-ArchiveItems');
    this.node.append(this._status, this._items);
    this.node.addEventListener('click', this._onClick);
    model.changed.connect(this._render, this);
    this._render();
  }

  /**
   * Disconnect from the model and the DOM.
   */
  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._model.changed.disconnect(this._render, this);
    this.node.removeEventListener('click', this._onClick);
    super.dispose();
  }

  private _onClick = (event: Event): void => {
    const item = (event.target as Element).closest<HTMLElement>(
      '[data-conversation-id]'
    );
    if (item) {
      void this._model.open(item.dataset.conversationId!);
    }
  };

  private _render(): void {
    const list = this._model.conversations;
    if (list === this._shown) {
      return;
    }
    this._shown = list;
    this._status.textContent =
      this._model.message ||
      (list === null
        ? this._trans.__('Loading…')
        : list.length === 0
          ? this._trans.__('No earlier conversations yet.')
          : '');
    this._status.hidden = !this._status.textContent;
    this._items.replaceChildren(
      ...(list ?? []).map(c => Private.item(c, this._trans))
    );
  }

  private _model: ArchiveModel;
  private _trans: TranslationBundle;
  private _shown: readonly IConversation[] | null | undefined = undefined;
  private _status: HTMLElement;
  private _items: HTMLElement;
}

namespace Private {
  /**
   * The entry of one conversation: its title, its agent and when it began.
   */
  export function item(
    c: IConversation,
    trans: TranslationBundle
  ): HTMLElement {
    const li = document.createElement('li');
    const button = element(
      'button',
      'jp-Copilot-ArchiveItem'
    ) as HTMLButtonElement;
    button.type = 'button';
    button.dataset.conversationId = c.id;
    const meta = [
      c.agentLabel,
      date(c.createdAt),
      c.archived ? trans.__('archived') : ''
    ].filter(Boolean);
    button.append(
      element(
        'span',
        'jp-Copilot-ArchiveTitle',
        c.title || trans.__('Untitled conversation')
      ),
      element('span', 'jp-Copilot-ArchiveMeta', meta.join(' · '))
    );
    li.append(button);
    return li;
  }

  /**
   * A short local date and time, or "" for a date that does not parse.
   */
  export function date(iso: string): string {
    const d = new Date(iso);
    return isNaN(d.getTime())
      ? ''
      : d.toLocaleString(undefined, {
          dateStyle: 'medium',
          timeStyle: 'short'
        });
  }
}

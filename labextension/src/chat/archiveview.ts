// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import { Dialog, showDialog } from '@jupyterlab/apputils';
import type { TranslationBundle } from '@jupyterlab/translation';
import { Widget } from '@lumino/widgets';

import { element, styledButton } from '../dom';
import { HiddenChars } from '../hiddenchars';
import type { ArchiveModel } from './archive';
import type { IConversation } from '../api';

import '../../style/history.css';

/**
 * The list of earlier conversations `.jp-Copilot-ArchiveList`, newest
 * first. Above it, "Only this notebook" `.jp-Copilot-ArchiveFilter` keeps
 * those whose messages came from the active notebook. Each entry holds a
 * button `.jp-Copilot-ArchiveItem[data-conversation-id]` that opens it
 * read-only, with its whole title (wrapped, and as its tooltip), and its
 * actions: Resume `.jp-Copilot-ArchiveResume` (only when its agent can load
 * its earlier session), Export `.jp-Copilot-ArchiveExport` (a Markdown
 * file) and Delete `.jp-Copilot-ArchiveDelete` (after a confirmation).
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
    const filter = element('label', 'jp-Copilot-ArchiveFilter');
    this._filter = document.createElement('input');
    this._filter.type = 'checkbox';
    this._filterText = element('span', 'jp-Copilot-ArchiveFilterText');
    filter.append(this._filter, this._filterText);
    this._filterRow = filter;
    this._status = element('p', 'jp-Copilot-ArchiveStatus');
    this._status.setAttribute('role', 'status');
    this._items = element('ul', 'jp-Copilot-ArchiveItems');
    this.node.append(filter, this._status, this._items);
    this.node.addEventListener('click', this._onClick);
    this._filter.addEventListener('change', this._onFilter);
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
    this._filter.removeEventListener('change', this._onFilter);
    super.dispose();
  }

  private _onFilter = (): void => {
    this._model.onlyThisNotebook = this._filter.checked;
  };

  private _onClick = (event: Event): void => {
    const target = event.target as Element;
    const action = target.closest<HTMLElement>('[data-action]');
    const entry = target.closest<HTMLElement>('[data-conversation-id]');
    const id = entry?.dataset.conversationId;
    if (!id) {
      return;
    }
    switch (action?.dataset.action) {
      case 'resume':
        void this._model.resume(id);
        break;
      case 'export':
        void this._export(id);
        break;
      case 'delete':
        void this._delete(id, entry!.dataset.title ?? '');
        break;
      default:
        void this._model.open(id);
    }
  };

  private async _export(id: string): Promise<void> {
    const file = await this._model.exportFile(id);
    if (!file) {
      return;
    }
    const url = URL.createObjectURL(
      new Blob([file.text], { type: 'text/markdown' })
    );
    const link = document.createElement('a');
    link.href = url;
    link.download = file.filename;
    link.hidden = true;
    document.body.append(link);
    link.click();
    link.remove();
    // Revoked once the browser has taken the file.
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  }

  private async _delete(id: string, title: string): Promise<void> {
    const trans = this._trans;
    const result = await showDialog({
      title: trans.__('Delete this conversation?'),
      body: trans.__(
        '"%1" and its messages will be deleted from this server for good. Export it first to keep a copy.',
        HiddenChars.escaped(title) || trans.__('Untitled conversation')
      ),
      buttons: [
        Dialog.cancelButton({ label: trans.__('Cancel') }),
        Dialog.warnButton({ label: trans.__('Delete') })
      ],
      // Enter cancels: deleting takes a deliberate click.
      defaultButton: 0
    });
    if (result.button.accept) {
      await this._model.remove(id);
    }
  }

  private _render(): void {
    const model = this._model;
    const path = model.activeNotebook;
    const trans = this._trans;
    this._filterRow.hidden = path === null;
    this._filter.checked = model.onlyThisNotebook;
    this._filterText.textContent = trans.__(
      'Only %1',
      path?.split('/').pop() ?? ''
    );
    this._filterRow.title = path ?? '';
    const list = model.shown;
    this._status.textContent =
      model.message ||
      (list === null
        ? trans.__('Loading…')
        : list.length === 0
          ? model.onlyThisNotebook && path !== null
            ? trans.__('No earlier conversations about this notebook.')
            : trans.__('No earlier conversations yet.')
          : '');
    this._status.hidden = !this._status.textContent;
    if (list === this._shown) {
      return;
    }
    this._shown = list;
    this._items.replaceChildren(
      ...(list ?? []).map(c => Private.item(c, trans))
    );
  }

  private _model: ArchiveModel;
  private _trans: TranslationBundle;
  private _shown: readonly IConversation[] | null | undefined = undefined;
  private _filterRow: HTMLElement;
  private _filter: HTMLInputElement;
  private _filterText: HTMLElement;
  private _status: HTMLElement;
  private _items: HTMLElement;
}

namespace Private {
  /**
   * The entry of one conversation: its title, its agent and when it began,
   * and its actions.
   */
  export function item(
    c: IConversation,
    trans: TranslationBundle
  ): HTMLElement {
    const li = element('li', 'jp-Copilot-ArchiveEntry');
    li.dataset.conversationId = c.id;
    const title = c.title || trans.__('Untitled conversation');
    li.dataset.title = title;
    const button = element(
      'button',
      'jp-Copilot-ArchiveItem'
    ) as HTMLButtonElement;
    button.type = 'button';
    button.dataset.conversationId = c.id;
    // The whole title, its hidden characters as escapes, also as tooltip.
    button.title = HiddenChars.escaped(title);
    const meta = [
      c.agentLabel,
      date(c.createdAt),
      c.archived ? trans.__('archived') : ''
    ].filter(Boolean);
    button.append(
      element('span', 'jp-Copilot-ArchiveTitle', HiddenChars.escaped(title)),
      element('span', 'jp-Copilot-ArchiveMeta', meta.join(' · '))
    );
    const actions = element('div', 'jp-Copilot-ArchiveActions');
    if (c.resumable) {
      actions.append(action('resume', trans.__('Resume'), title, trans));
    }
    actions.append(
      action('export', trans.__('Export'), title, trans),
      action('delete', trans.__('Delete'), title, trans)
    );
    li.append(button, actions);
    return li;
  }

  /**
   * One action button of an entry, named with the conversation's title for
   * screen readers.
   */
  function action(
    name: string,
    label: string,
    title: string,
    trans: TranslationBundle
  ): HTMLButtonElement {
    const node = styledButton(
      `jp-Copilot-Archive${name[0].toUpperCase()}${name.slice(1)}`,
      label
    );
    node.dataset.action = name;
    node.setAttribute(
      'aria-label',
      trans.__('%1: %2', label, HiddenChars.escaped(title))
    );
    return node;
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

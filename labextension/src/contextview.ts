// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import type { TranslationBundle } from '@jupyterlab/translation';
import { Widget } from '@lumino/widgets';

import { ContextModel } from './contextmodel';
import { element } from './dom';
import { formatBytes } from './format';

/**
 * The "Context" section of the side panel: a hint, or the pill of the one
 * selected cell with its attach toggle. It never shows cell source.
 */
export class ContextView extends Widget {
  /**
   * Create the view of a context model.
   */
  constructor(model: ContextModel, trans: TranslationBundle) {
    super();
    this._model = model;
    this._trans = trans;
    this.addClass('jp-Copilot-Context');
    const title = element('h3', 'jp-Copilot-SectionTitle', trans.__('Context'));
    this._hint = element('p', 'jp-Copilot-Hint', '');
    this._pill = element('div', 'jp-Copilot-Pill');
    this._label = element('span', 'jp-Copilot-PillLabel');
    this._meta = element('span', 'jp-Copilot-PillMeta');
    this._message = element('span', 'jp-Copilot-PillMessage');
    this._toggle = element(
      'button',
      'jp-Copilot-AttachToggle'
    ) as HTMLButtonElement;
    this._toggle.type = 'button';
    this._toggle.addEventListener('click', this._onToggle);
    this._pill.append(this._label, this._meta, this._message, this._toggle);
    this.node.append(title, this._hint, this._pill);
    model.changed.connect(this._render, this);
    model.attachmentChanged.connect(this._render, this);
    this._render();
  }

  /**
   * Disconnect from the model.
   */
  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._model.changed.disconnect(this._render, this);
    this._model.attachmentChanged.disconnect(this._render, this);
    this._toggle.removeEventListener('click', this._onToggle);
    super.dispose();
  }

  private _onToggle = (): void => {
    if (this._model.attachment) {
      this._model.detach();
    } else {
      this._model.attach();
    }
  };

  private _render(): void {
    const trans = this._trans;
    const context = this._model.context;
    const cell = context?.cell ?? null;
    this._hint.textContent = Private.hint(context, trans);
    this._hint.hidden = cell !== null;
    this._pill.hidden = cell === null;
    if (!cell) {
      this._pill.removeAttribute('data-cell-id');
      return;
    }
    const a = this._model.attachment;
    const attached =
      !!a && a.artifactId === cell.artifactId && a.cellId === cell.cellId;
    this._pill.dataset.cellId = cell.cellId;
    this._pill.dataset.attached = String(attached);
    this._pill.dataset.cellType = cell.cellType;
    this._label.textContent = cell.label;
    this._meta.textContent = Private.lines(cell.lineCount, trans);
    this._meta.hidden = cell.lineCount === null;
    this._message.textContent = Private.omitted(cell, trans);
    this._message.hidden = !cell.omitted;
    this._toggle.disabled = !cell.expectedSourceHash;
    this._toggle.setAttribute('aria-pressed', String(attached));
    this._toggle.textContent = attached
      ? trans.__('Attached')
      : trans.__('Attach');
    this._toggle.title = !cell.expectedSourceHash
      ? trans.__('This cell cannot be attached.')
      : attached
        ? trans.__(
            'Attached: the conversation may read this cell and propose an edit to it. Click to detach.'
          )
        : trans.__(
            'Attach this cell so that the conversation may read it and propose an edit to it.'
          );
  }

  private _model: ContextModel;
  private _trans: TranslationBundle;
  private _hint: HTMLElement;
  private _pill: HTMLElement;
  private _label: HTMLElement;
  private _meta: HTMLElement;
  private _message: HTMLElement;
  private _toggle: HTMLButtonElement;
}

namespace Private {
  /**
   * The hint shown when there is no single selected cell.
   */
  export function hint(
    context: ContextModel.IContext | null,
    trans: TranslationBundle
  ): string {
    if (context?.message) {
      return context.message;
    }
    const count = context?.viewState?.selectedCellCount;
    if (count === undefined) {
      return trans.__('Open a notebook and select a cell to attach it.');
    }
    return count > 1
      ? trans._n(
          '%1 cell is selected. Select a single cell to attach it.',
          '%1 cells are selected. Select a single cell to attach it.',
          count
        )
      : trans.__('Select a cell to attach it.');
  }

  /**
   * "empty", "1 line" or "n lines".
   */
  export function lines(
    count: number | null,
    trans: TranslationBundle
  ): string {
    if (!count) {
      return trans.__('empty');
    }
    return trans._n('%1 line', '%1 lines', count);
  }

  /**
   * Why the selected cell cannot be attached, or "".
   */
  export function omitted(
    cell: ContextModel.ICell,
    trans: TranslationBundle
  ): string {
    const o = cell.omitted;
    if (!o) {
      return '';
    }
    if (o.reason === 'over-budget') {
      const size =
        o.sourceBytes === null
          ? trans.__('unknown size')
          : formatBytes(o.sourceBytes, trans);
      return o.budgetBytes === undefined
        ? trans.__('This cell is too large to attach: %1.', size)
        : trans.__(
            'This cell is too large to attach: %1, the limit is %2.',
            size,
            formatBytes(o.budgetBytes, trans)
          );
    }
    return trans.__(
      'This cell contains characters that cannot be sent, so it cannot be attached.'
    );
  }
}

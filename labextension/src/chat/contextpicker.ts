// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import type { TranslationBundle } from '@jupyterlab/translation';
import { IDisposable } from '@lumino/disposable';

import { element } from '../dom';
import type { IAgentsInfo } from '../api';
import { CONTEXT_REFS, ContextRef } from '../generated/vocabulary.js';
import { oneOf } from '../protocol';
import type { ChatModel } from './model';
import { labelledCheckbox, Popover } from './popover';

/**
 * The Context popover: one checkbox per context reference
 * (`input[data-context-ref]`) with what it allows, and Restore defaults
 * (`.jp-Copilot-RestoreDefaults`). Changes apply to the running
 * conversation at the agent's next tool call.
 */
export class ContextPicker implements IDisposable {
  /**
   * Create the picker of a chat model.
   */
  constructor(model: ChatModel, trans: TranslationBundle) {
    this._model = model;
    this._trans = trans;
    this.popover = new Popover({
      title: trans.__('What the agent may read'),
      buttonClass: 'jp-Copilot-ContextPicker',
      popoverClass: 'jp-Copilot-ContextPopover'
    });
    this._list = element('div', 'jp-Copilot-ContextRefs');
    this._hint = element('p', 'jp-Copilot-PopoverHint');
    this._restore = document.createElement('button');
    this._restore.className = 'jp-Copilot-RestoreDefaults';
    this._restore.textContent = trans.__('Restore defaults');
    this._restore.type = 'button';
    this.popover.node.append(this._list, this._hint, this._restore);
    this._list.addEventListener('change', this._onChange);
    this._restore.addEventListener('click', this._onRestore);
    model.changed.connect(this._render, this);
    this._render();
  }

  /** The button and its popover. */
  readonly popover: Popover;

  /** Whether the picker is disposed. */
  get isDisposed(): boolean {
    return this.popover.isDisposed;
  }

  /**
   * Disconnect from the model and the DOM.
   */
  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._model.changed.disconnect(this._render, this);
    this._list.removeEventListener('change', this._onChange);
    this._restore.removeEventListener('click', this._onRestore);
    this.popover.dispose();
  }

  private _onChange = (): void => {
    const refs = [
      ...this._list.querySelectorAll<HTMLInputElement>('[data-context-ref]')
    ]
      .filter(box => box.checked)
      .map(box => oneOf(CONTEXT_REFS, box.dataset.contextRef))
      .filter((ref): ref is ContextRef => ref !== undefined);
    void this._model.update({ contextRefs: refs });
  };

  private _onRestore = (): void => {
    const defaults = this._model.catalog?.defaults.contextRefs ?? [];
    void this._model.update({ contextRefs: [...defaults] });
  };

  private _render(): void {
    const { catalog, settings } = this._model;
    if (catalog !== this._catalog) {
      this._catalog = catalog;
      this._list.replaceChildren(
        ...(catalog?.contextRefs ?? []).map(ref => {
          const [label, box] = labelledCheckbox(
            'jp-Copilot-ContextRef',
            ref.label,
            ref.allows
          );
          box.dataset.contextRef = ref.id;
          return label;
        })
      );
    }
    const granted = new Set<string>(settings.contextRefs);
    const noTools = settings.chatOnly || catalog?.toolsEnabled === false;
    this._list
      .querySelectorAll<HTMLInputElement>('[data-context-ref]')
      .forEach(box => {
        box.checked = granted.has(box.dataset.contextRef!);
        box.disabled = noTools;
      });
    const count = noTools
      ? 0
      : (catalog?.contextRefs ?? []).filter(r => granted.has(r.id)).length;
    const trans = this._trans;
    this.popover.label = trans.__('Context');
    this.popover.badge = String(count);
    this.popover.button.title =
      count === 0
        ? trans.__('The agent may read no kinds of context. Click to choose.')
        : trans._n(
            'The agent may read %1 kind of context. Click to choose.',
            'The agent may read %1 kinds of context. Click to choose.',
            count
          );
    const defaults = catalog?.defaults.contextRefs ?? [];
    this._restore.disabled =
      noTools ||
      (defaults.length === granted.size &&
        defaults.every(id => granted.has(id)));
    this._hint.textContent = settings.chatOnly
      ? trans.__(
          'Chat only: the agent has no tools, so it reads none of these.'
        )
      : catalog?.toolsEnabled === false
        ? trans.__(
            'Tools are turned off on this server, so the agent reads none of these.'
          )
        : '';
    this._hint.hidden = !this._hint.textContent;
  }

  private _model: ChatModel;
  private _trans: TranslationBundle;
  private _catalog: IAgentsInfo | null = null;
  private _list: HTMLElement;
  private _hint: HTMLElement;
  private _restore: HTMLButtonElement;
}

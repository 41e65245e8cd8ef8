// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import type { TranslationBundle } from '@jupyterlab/translation';

import type { CopilotApi, IPersonalKeyModel, Outcome } from '../api';
import { element, styledButton } from '../dom';

/**
 * The Agent menu's "Your own keys" section (docs/admin.md, "Personal keys"):
 * for each model the administrator lets people bring a key for
 * (`[data-key-model-id]`), whether a key is set (`.jp-Copilot-KeyStatus`), a
 * password field to set or replace it and a Remove button. The key is sent
 * once and never shown again: the server answers only whether one is set.
 * Hidden when the administrator does not allow personal keys.
 */
export class PersonalKeysView {
  /**
   * Create the section; call {@link refresh} to fill it.
   */
  constructor(api: CopilotApi, trans: TranslationBundle) {
    this._api = api;
    this._trans = trans;
    this.node = element('div', 'jp-Copilot-PersonalKeys');
    this.node.hidden = true;
    this._list = element('div', 'jp-Copilot-PersonalKeyList');
    this._error = element('p', 'jp-Copilot-PersonalKeyError');
    this._error.setAttribute('role', 'alert');
    this._error.hidden = true;
    this.node.append(
      element('div', 'jp-Copilot-PersonalKeysTitle', trans.__('Your own keys')),
      element(
        'p',
        'jp-Copilot-PopoverHint',
        trans.__(
          'Kept on the server for you only and never shown again. Your new conversations with the model use it.'
        )
      ),
      this._list,
      this._error
    );
  }

  /** The section, to place in the Agent menu. */
  readonly node: HTMLElement;

  /**
   * Ask the server which models take a personal key and redraw.
   */
  async refresh(): Promise<void> {
    const reply = await this._api.personalKeys();
    const models = reply.result?.allowed ? reply.result.models : [];
    this.node.hidden = models.length === 0;
    this._list.replaceChildren(...models.map(m => this._row(m)));
  }

  private _row(model: IPersonalKeyModel): HTMLElement {
    const trans = this._trans;
    const row = element('div', 'jp-Copilot-PersonalKey');
    row.dataset.keyModelId = model.id;
    row.dataset.keySet = String(model.keySet);
    const status = element(
      'span',
      'jp-Copilot-KeyStatus',
      model.keySet ? trans.__('Key set') : trans.__('No key set')
    );
    const input = document.createElement('input');
    input.className = 'jp-mod-styled jp-Copilot-KeyInput';
    input.type = 'password';
    input.autocomplete = 'off';
    input.spellcheck = false;
    input.placeholder = model.keySet
      ? trans.__('Paste a new key to replace it')
      : trans.__('Paste your key');
    input.setAttribute('aria-label', trans.__('Your key for %1', model.label));
    const save = styledButton(
      'jp-Copilot-KeySave',
      model.keySet ? trans.__('Replace') : trans.__('Set key')
    );
    save.addEventListener('click', () => {
      const key = input.value.trim();
      input.value = '';
      if (key) {
        void this._apply(this._api.setPersonalKey(model.id, key));
      }
    });
    input.addEventListener('keydown', event => {
      if (event.key === 'Enter') {
        event.preventDefault();
        save.click();
      }
    });
    const controls = element('div', 'jp-Copilot-KeyControls');
    controls.append(input, save);
    if (model.keySet) {
      const remove = styledButton('jp-Copilot-KeyRemove', trans.__('Remove'));
      remove.addEventListener('click', () => {
        void this._apply(this._api.removePersonalKey(model.id));
      });
      controls.append(remove);
    }
    row.append(
      element('span', 'jp-Copilot-PersonalKeyLabel', model.label),
      status,
      controls
    );
    return row;
  }

  /**
   * Show a refusal in words, or redraw with the server's new state.
   */
  private async _apply(
    request: Promise<Outcome<IPersonalKeyModel>>
  ): Promise<void> {
    const reply = await request;
    this._error.textContent = reply.error ? reply.error.message : '';
    this._error.hidden = !reply.error;
    await this.refresh();
  }

  private _api: CopilotApi;
  private _trans: TranslationBundle;
  private _list: HTMLElement;
  private _error: HTMLElement;
}

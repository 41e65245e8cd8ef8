// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import type { TranslationBundle } from '@jupyterlab/translation';
import { errorIcon } from '@jupyterlab/ui-components';
import { IDisposable } from '@lumino/disposable';

import { element } from '../dom';
import type { IAgent, IAgentsInfo } from '../api';
import type { ChatModel } from './model';
import { PersonalKeysView } from './personalkeys';
import { labelledCheckbox, Popover } from './popover';

/**
 * The Agent popover: the agents with their one-line descriptions
 * (`[data-agent-id]`, role radio) and, for an agent the server warns about,
 * its warning `.jp-Copilot-AgentWarning`; an agent that cannot start (not
 * installed) is listed disabled (`[data-unavailable]`) with its install
 * command as its description; the Chat-only switch
 * (`input[data-chat-only]`); the server's sandbox state in one line
 * (`.jp-Copilot-SandboxLine[data-sandbox-mode][data-sandbox-active]`); and,
 * where the administrator allows them, the person's own keys
 * ({@link PersonalKeysView}). The agent and Chat only are fixed from the first
 * message on.
 */
export class AgentPicker implements IDisposable {
  /**
   * Create the picker of a chat model.
   */
  constructor(model: ChatModel, trans: TranslationBundle) {
    this._model = model;
    this._trans = trans;
    this.popover = new Popover({
      title: trans.__('Agent'),
      buttonClass: 'jp-Copilot-AgentPicker',
      popoverClass: 'jp-Copilot-AgentPopover'
    });
    this._list = element('div', 'jp-Copilot-AgentList');
    this._list.setAttribute('role', 'radiogroup');
    this._list.setAttribute('aria-label', trans.__('Agent'));
    const [chatOnly, box] = labelledCheckbox(
      'jp-Copilot-ChatOnly',
      trans.__('Chat only'),
      trans.__(
        'No tools: the agent gets your messages and attached cells only.'
      )
    );
    box.dataset.chatOnly = '';
    this._chatOnly = box;
    this._hint = element('p', 'jp-Copilot-PopoverHint');
    this._sandbox = element('p', 'jp-Copilot-SandboxLine');
    this._sandbox.hidden = true;
    this._keys = new PersonalKeysView(model.api, trans);
    this.popover.node.append(
      this._list,
      chatOnly,
      this._hint,
      this._sandbox,
      this._keys.node
    );
    // The keys are asked for when the menu opens, not at JupyterLab's start.
    this.popover.button.addEventListener('click', this._onOpen);
    this._list.addEventListener('click', this._onPick);
    this._list.addEventListener('keydown', this._onKeydown);
    box.addEventListener('change', this._onChatOnly);
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
    this._list.removeEventListener('click', this._onPick);
    this._list.removeEventListener('keydown', this._onKeydown);
    this._chatOnly.removeEventListener('change', this._onChatOnly);
    this.popover.button.removeEventListener('click', this._onOpen);
    this.popover.dispose();
  }

  private _onPick = (event: Event): void => {
    const item = (event.target as Element).closest<HTMLButtonElement>(
      '[data-agent-id]'
    );
    if (item && !item.disabled) {
      void this._model.update({ agentId: item.dataset.agentId! });
    }
  };

  /**
   * Arrow keys move between the agents, as in any radio group.
   */
  private _onKeydown = (event: KeyboardEvent): void => {
    const step = { ArrowDown: 1, ArrowRight: 1, ArrowUp: -1, ArrowLeft: -1 }[
      event.key
    ];
    if (!step) {
      return;
    }
    event.preventDefault();
    const items = [
      ...this._list.querySelectorAll<HTMLButtonElement>('[data-agent-id]')
    ];
    const i = items.indexOf(document.activeElement as HTMLButtonElement);
    items[(i + step + items.length) % items.length]?.focus();
  };

  private _onOpen = (): void => {
    if (this.popover.isOpen) {
      void this._keys.refresh();
    }
  };

  private _onChatOnly = (): void => {
    void this._model.update({ chatOnly: this._chatOnly.checked });
  };

  private _render(): void {
    const { catalog, settings, isFixed } = this._model;
    if (catalog !== this._catalog) {
      this._catalog = catalog;
      this._list.replaceChildren(
        ...(catalog?.agents ?? []).map(Private.agentItem)
      );
      Private.sandboxLine(this._sandbox, catalog);
    }
    const trans = this._trans;
    const agent = catalog?.agents.find(a => a.id === settings.agentId);
    this.popover.label = agent?.label ?? trans.__('Agent');
    this.popover.button.title = !agent
      ? trans.__('Choose an agent')
      : settings.chatOnly
        ? trans.__('Agent: %1 (chat only)', agent.label)
        : trans.__('Agent: %1', agent.label);
    this.popover.button.classList.toggle('jp-mod-chatOnly', settings.chatOnly);
    // Chat only shows in the bar at all times, not only in the menu.
    this.popover.badge = settings.chatOnly ? trans.__('Chat only') : '';
    this._list
      .querySelectorAll<HTMLButtonElement>('[data-agent-id]')
      .forEach(item => {
        item.setAttribute(
          'aria-checked',
          String(item.dataset.agentId === settings.agentId)
        );
        // The id is what the Settings Editor's default agent takes.
        item.title = trans.__('id: %1', item.dataset.agentId ?? '');
        item.disabled = isFixed || item.dataset.unavailable !== undefined;
      });
    this._chatOnly.checked = settings.chatOnly;
    this._chatOnly.disabled = isFixed;
    this._hint.textContent = isFixed
      ? trans.__(
          'The agent and Chat only are fixed for this conversation. Start a new conversation (+) to change them.'
        )
      : catalog && catalog.agents.length === 0
        ? trans.__('No agent is available on this server.')
        : '';
    this._hint.hidden = !this._hint.textContent;
  }

  private _model: ChatModel;
  private _trans: TranslationBundle;
  private _catalog: IAgentsInfo | null = null;
  private _list: HTMLElement;
  private _chatOnly: HTMLInputElement;
  private _hint: HTMLElement;
  private _sandbox: HTMLElement;
  private _keys: PersonalKeysView;
}

namespace Private {
  /**
   * The item of one agent: its label, the first line of its description
   * and the server's warning about it, if any.
   */
  export function agentItem(agent: IAgent): HTMLElement {
    const item = element('button', 'jp-Copilot-AgentItem') as HTMLButtonElement;
    item.type = 'button';
    item.setAttribute('role', 'radio');
    item.dataset.agentId = agent.id;
    if (typeof agent.guarded === 'boolean') {
      item.dataset.guarded = String(agent.guarded);
    }
    if (typeof agent.unavailable === 'string' && agent.unavailable) {
      // Listed so that the person learns how to install it; not a choice.
      item.dataset.unavailable = '';
      item.setAttribute('aria-disabled', 'true');
    }
    item.append(
      element('span', 'jp-Copilot-AgentLabel', agent.label),
      element(
        'span',
        'jp-Copilot-AgentDescription',
        agent.description.split('\n', 1)[0]
      )
    );
    if (typeof agent.warning === 'string' && agent.warning.trim()) {
      const warning = element('span', 'jp-Copilot-AgentWarning');
      const icon = errorIcon.element({
        tag: 'span',
        className: 'jp-Copilot-Icon'
      });
      icon.setAttribute('aria-hidden', 'true');
      warning.append(
        icon,
        element('span', 'jp-Copilot-AgentWarningText', agent.warning)
      );
      item.append(warning);
    }
    return item;
  }

  /**
   * Show the server's sandbox state, or hide the line when it says none.
   */
  export function sandboxLine(
    node: HTMLElement,
    catalog: IAgentsInfo | null
  ): void {
    const sandbox = catalog?.sandbox;
    const text = typeof sandbox?.text === 'string' ? sandbox.text : '';
    node.textContent = text;
    node.hidden = !text;
    if (sandbox && text) {
      node.dataset.sandboxMode = String(sandbox.mode);
      node.dataset.sandboxActive = String(sandbox.active === true);
    }
  }
}

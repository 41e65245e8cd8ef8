// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import { element } from '../dom';
import type { ApprovalModel } from './model';

/**
 * The DOM of one approval card, with the hooks browser tests use:
 * `.jp-Copilot-Approval[data-request-id][data-state]` (role group), its
 * parts `.jp-Copilot-Approval{Tool,Operation,Target,Size,Message}` and the
 * buttons `.jp-Copilot-ApprovalAllow` and `.jp-Copilot-ApprovalDeny`.
 */
export namespace ApprovalCard {
  /**
   * The empty card of a request.
   */
  export function create(requestId: string): HTMLElement {
    const node = element('div', 'jp-Copilot-Approval');
    node.dataset.requestId = requestId;
    node.setAttribute('role', 'group');
    // Focusable by script only, to take the focus when a focused card goes.
    node.tabIndex = -1;
    const actions = element('div', 'jp-Copilot-ApprovalActions');
    const allow = Private.button('jp-mod-accept jp-Copilot-ApprovalAllow', 'Allow once');
    allow.title = 'Let this tool call go ahead once. An edit still opens as a review first.';
    const deny = Private.button('jp-mod-reject jp-Copilot-ApprovalDeny', 'Deny');
    deny.title = 'Refuse this tool call (Escape)';
    actions.append(allow, deny);
    const message = element('div', 'jp-Copilot-ApprovalMessage');
    message.setAttribute('role', 'status');
    message.setAttribute('aria-live', 'polite');
    node.append(
      element('div', 'jp-Copilot-ApprovalTool'),
      element('div', 'jp-Copilot-ApprovalOperation'),
      element('div', 'jp-Copilot-ApprovalTarget'),
      element('div', 'jp-Copilot-ApprovalSize'),
      message,
      actions
    );
    return node;
  }

  /**
   * Show a card's texts and state.
   */
  export function update(node: HTMLElement, card: ApprovalModel.ICard): void {
    node.dataset.state = card.state;
    node.setAttribute('aria-label', `Approval for ${card.toolName}`);
    node.setAttribute('aria-busy', String(card.state === 'deciding'));
    Private.text(node, '.jp-Copilot-ApprovalTool', card.toolName);
    Private.text(node, '.jp-Copilot-ApprovalOperation', card.operation);
    Private.text(node, '.jp-Copilot-ApprovalTarget', card.target);
    Private.text(node, '.jp-Copilot-ApprovalSize', card.size);
    Private.text(node, '.jp-Copilot-ApprovalMessage', card.message);
    // While deciding, or once ended, the buttons stay focusable but inert,
    // so that the focus stays where the person left it.
    node.querySelectorAll('button').forEach(b => {
      b.setAttribute('aria-disabled', String(card.state !== 'pending'));
    });
  }
}

namespace Private {
  /**
   * Set a part's text; an empty part is hidden.
   */
  export function text(node: HTMLElement, selector: string, value: string): void {
    const part = node.querySelector<HTMLElement>(selector)!;
    part.textContent = value;
    part.hidden = !value;
  }

  /**
   * A styled `<button>` of type button.
   */
  export function button(className: string, label: string): HTMLButtonElement {
    const node = element('button', `jp-mod-styled ${className}`, label) as HTMLButtonElement;
    node.type = 'button';
    return node;
  }
}

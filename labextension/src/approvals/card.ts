// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import type { TranslationBundle } from '@jupyterlab/translation';

import { element, styledButton } from '../dom';
import type { IPermissionOption } from '../protocol';
import type { ApprovalModel } from './model';
import { ApprovalTexts } from './texts';

/**
 * The DOM of one approval card, with the hooks browser tests use:
 * `.jp-Copilot-Approval[data-request-id][data-kind][data-state]` (role
 * group), its parts `.jp-Copilot-Approval{Tool,Operation,Target,Size,Message}`
 * and its buttons: `.jp-Copilot-ApprovalAllow` and `.jp-Copilot-ApprovalDeny`
 * on an edit, run or shell card; a run card (`data-kind="run"`) says in
 * `.jp-Copilot-ApprovalSource[data-stale]` whether the cell still holds the
 * source the agent read (with the short form of its hash); on a card that
 * names a cell the target is a button that brings the cell into view; a
 * shell card (`data-kind="shell"`) also shows
 * the exact command in `pre.jp-Copilot-ApprovalCommand` and its folder in
 * `.jp-Copilot-ApprovalTarget`; on an agent's permission card one
 * `.jp-Copilot-ApprovalOption[data-option-id][data-option-kind]` per option
 * the agent offered, in its order.
 */
export namespace ApprovalCard {
  /**
   * The empty card of a request, with the buttons its kind needs.
   */
  export function create(
    card: ApprovalModel.ICard,
    trans: TranslationBundle
  ): HTMLElement {
    const node = element('div', 'jp-Copilot-Approval');
    node.dataset.requestId = card.requestId;
    node.dataset.kind = card.kind;
    node.setAttribute('role', 'group');
    // Focusable by script only, to take the focus when a focused card goes.
    node.tabIndex = -1;
    const actions = element('div', 'jp-Copilot-ApprovalActions');
    if (card.kind === 'permission' && card.options.length > 0) {
      actions.append(...card.options.map(Private.option));
    } else {
      const allow = styledButton(
        'jp-mod-accept jp-Copilot-ApprovalAllow',
        trans.__('Allow once')
      );
      allow.title =
        card.kind === 'shell'
          ? trans.__('Run this command once, exactly as shown.')
          : card.kind === 'run'
            ? trans.__(
                'Run this cell once, only if it still holds the source the agent read.'
              )
            : trans.__(
                'Let this tool call go ahead once. An edit still opens as a review first.'
              );
      const deny = styledButton(
        'jp-mod-reject jp-Copilot-ApprovalDeny',
        trans.__('Deny')
      );
      deny.title = trans.__('Refuse this tool call (Escape)');
      actions.append(allow, deny);
    }
    const message = element('div', 'jp-Copilot-ApprovalMessage');
    message.setAttribute('role', 'status');
    message.setAttribute('aria-live', 'polite');
    // A card about a cell links to it.
    const target = card.cellId
      ? styledButton('jp-Copilot-ApprovalTarget jp-Copilot-CellLink', '')
      : element('div', 'jp-Copilot-ApprovalTarget');
    if (card.cellId) {
      target.title = trans.__('Show this cell in its notebook');
    }
    node.append(
      element('div', 'jp-Copilot-ApprovalTool'),
      element('div', 'jp-Copilot-ApprovalOperation'),
      element('pre', 'jp-Copilot-ApprovalCommand'),
      target,
      element('div', 'jp-Copilot-ApprovalSource'),
      element('div', 'jp-Copilot-ApprovalSize'),
      message,
      actions
    );
    return node;
  }

  /**
   * Show a card's texts and state.
   */
  export function update(
    node: HTMLElement,
    card: ApprovalModel.ICard,
    trans: TranslationBundle
  ): void {
    node.dataset.state = card.state;
    const tool = ApprovalTexts.toolTitle(card.toolName);
    node.setAttribute('aria-label', trans.__('Approval for %1', tool));
    node.setAttribute('aria-busy', String(card.state === 'deciding'));
    Private.text(node, '.jp-Copilot-ApprovalTool', tool);
    node.querySelector<HTMLElement>('.jp-Copilot-ApprovalTool')!.title =
      tool === card.toolName ? '' : card.toolName;
    Private.text(node, '.jp-Copilot-ApprovalOperation', card.operation);
    // The command exactly as it would run: never cut, never rendered.
    Private.text(node, '.jp-Copilot-ApprovalCommand', card.command);
    Private.text(node, '.jp-Copilot-ApprovalTarget', card.target);
    Private.text(node, '.jp-Copilot-ApprovalSource', card.runSource);
    node.querySelector<HTMLElement>(
      '.jp-Copilot-ApprovalSource'
    )!.dataset.stale = String(card.runStale);
    Private.text(node, '.jp-Copilot-ApprovalSize', card.size);
    Private.text(node, '.jp-Copilot-ApprovalMessage', card.message);
    // While deciding, or once ended, the buttons stay focusable but inert,
    // so that the focus stays where the person left it.
    node.querySelectorAll('.jp-Copilot-ApprovalActions button').forEach(b => {
      b.setAttribute('aria-disabled', String(card.state !== 'pending'));
    });
  }
}

namespace Private {
  /**
   * Set a part's text; an empty part is hidden.
   */
  export function text(
    node: HTMLElement,
    selector: string,
    value: string
  ): void {
    const part = node.querySelector<HTMLElement>(selector)!;
    part.textContent = value;
    part.hidden = !value;
  }

  /**
   * The button of one permission option: the agent's allow options are
   * primary, its reject options secondary.
   */
  export function option(o: IPermissionOption): HTMLButtonElement {
    const primary = o.kind.startsWith('allow');
    const node = styledButton(
      `${primary ? 'jp-mod-accept' : 'jp-mod-reject'} jp-Copilot-ApprovalOption`,
      o.name
    );
    node.dataset.optionId = o.optionId;
    node.dataset.optionKind = o.kind;
    return node;
  }
}

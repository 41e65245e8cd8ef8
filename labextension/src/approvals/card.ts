// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import type { TranslationBundle } from '@jupyterlab/translation';
import { errorIcon } from '@jupyterlab/ui-components';

import { element, styledButton } from '../dom';
import { HiddenChars } from '../hiddenchars';
import type { IPermissionOption } from '../protocol';
import { Visible } from '../visible';
import type { ApprovalModel } from './model';
import { ApprovalTexts } from './texts';

/**
 * The DOM of one approval card, with the hooks browser tests use:
 * `.jp-Copilot-Approval[data-request-id][data-kind][data-state]` (role
 * group), its parts `.jp-Copilot-Approval{Tool,Operation,Target,Size,Message}`
 * and its buttons: `.jp-Copilot-ApprovalAllow` and `.jp-Copilot-ApprovalDeny`
 * on an edit, run or shell card; a run card (`data-kind="run"`) says in
 * `.jp-Copilot-ApprovalSource[data-stale]` whether the cell still holds the
 * source the agent read, live, with a warning icon once it does not (never
 * a hash: hashes are for machines); an edit card has a hint
 * `.jp-Copilot-ApprovalHint` with the keys of the review; on a card that
 * names a cell the target is a button that brings the cell into view; a
 * shell card (`data-kind="shell"`) also shows
 * the exact command in `pre.jp-Copilot-ApprovalCommand`, the absolute path
 * of the program that runs in `.jp-Copilot-ApprovalProgram`, its folder in
 * `.jp-Copilot-ApprovalTarget` and, when the agent asked for environment
 * variables, that they are not used in `.jp-Copilot-ApprovalEnv`; on an
 * agent's permission card one
 * `.jp-Copilot-ApprovalOption[data-option-id][data-option-kind]` per option
 * the agent offered, in its order.
 *
 * Every text of a card is shown with its hidden characters as escapes
 * (`span.jp-Copilot-HiddenChar`, see {@link Visible}): what an agent sent
 * cannot read otherwise than it is.
 */
export namespace ApprovalCard {
  /**
   * The empty card of a request, with the buttons its kind needs.
   */
  export function create(
    card: ApprovalModel.ICard,
    trans: TranslationBundle,
    hint = ''
  ): HTMLElement {
    const node = element('div', 'jp-Copilot-Approval');
    node.dataset.requestId = card.requestId;
    node.dataset.kind = card.kind;
    node.setAttribute('role', 'group');
    // Focusable by script only, to take the focus when a focused card goes.
    node.tabIndex = -1;
    const actions = element('div', 'jp-Copilot-ApprovalActions');
    if (card.kind === 'permission' && card.options.length > 0) {
      const titles = Visible.titles(trans);
      actions.append(...card.options.map(o => Private.option(o, titles)));
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
    // The line about a run card's source says at once when the cell changes.
    const source = element('div', 'jp-Copilot-ApprovalSource');
    source.setAttribute('role', 'status');
    const icon = errorIcon.element({
      tag: 'span',
      className: 'jp-Copilot-Icon jp-Copilot-ApprovalSourceIcon'
    });
    icon.setAttribute('aria-hidden', 'true');
    source.append(icon, element('span', 'jp-Copilot-ApprovalSourceText'));
    const hintLine = element('div', 'jp-Copilot-ApprovalHint', hint);
    hintLine.hidden = !hint;
    node.append(
      element('div', 'jp-Copilot-ApprovalTool'),
      element('div', 'jp-Copilot-ApprovalOperation'),
      element('pre', 'jp-Copilot-ApprovalCommand'),
      element('div', 'jp-Copilot-ApprovalProgram'),
      target,
      element('div', 'jp-Copilot-ApprovalEnv'),
      source,
      element('div', 'jp-Copilot-ApprovalSize'),
      message,
      actions,
      hintLine
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
    const titles = Visible.titles(trans);
    const tool = ApprovalTexts.toolLabel(card.toolName);
    node.setAttribute(
      'aria-label',
      trans.__('Approval for %1', HiddenChars.escaped(tool))
    );
    node.setAttribute('aria-busy', String(card.state === 'deciding'));
    Private.text(node, '.jp-Copilot-ApprovalTool', tool, titles);
    node.querySelector<HTMLElement>('.jp-Copilot-ApprovalTool')!.title =
      tool === card.toolName ? '' : HiddenChars.escaped(card.toolName);
    Private.text(node, '.jp-Copilot-ApprovalOperation', card.operation, titles);
    // The command exactly as it would run: never cut, never rendered.
    Private.text(node, '.jp-Copilot-ApprovalCommand', card.command, titles);
    Private.text(node, '.jp-Copilot-ApprovalProgram', card.program, titles);
    Private.text(node, '.jp-Copilot-ApprovalTarget', card.target, titles);
    Private.text(node, '.jp-Copilot-ApprovalEnv', card.env, titles);
    const source = node.querySelector<HTMLElement>(
      '.jp-Copilot-ApprovalSource'
    )!;
    Private.text(
      source,
      '.jp-Copilot-ApprovalSourceText',
      card.runSource,
      titles
    );
    source.hidden = !card.runSource;
    source.dataset.stale = String(card.runStale);
    source.querySelector<HTMLElement>(
      '.jp-Copilot-ApprovalSourceIcon'
    )!.hidden = !card.runStale;
    Private.text(node, '.jp-Copilot-ApprovalSize', card.size, titles);
    Private.text(node, '.jp-Copilot-ApprovalMessage', card.message, titles);
    // While deciding, or once ended, the buttons stay focusable but inert,
    // so that the focus stays where the person left it.
    node.querySelectorAll('.jp-Copilot-ApprovalActions button').forEach(b => {
      b.setAttribute('aria-disabled', String(card.state !== 'pending'));
    });
  }
}

namespace Private {
  /**
   * Set a part's text, hidden characters as escapes; an empty part is hidden.
   */
  export function text(
    node: HTMLElement,
    selector: string,
    value: string,
    titles: Visible.Titles
  ): void {
    const part = node.querySelector<HTMLElement>(selector)!;
    Visible.setText(part, value, titles);
    part.hidden = !value;
  }

  /**
   * The button of one permission option: the agent's allow options are
   * primary, its reject options secondary.
   */
  export function option(
    o: IPermissionOption,
    titles: Visible.Titles
  ): HTMLButtonElement {
    const primary = o.kind.startsWith('allow');
    const node = styledButton(
      `${primary ? 'jp-mod-accept' : 'jp-mod-reject'} jp-Copilot-ApprovalOption`,
      ''
    );
    Visible.setText(node, o.name, titles);
    node.dataset.optionId = o.optionId;
    node.dataset.optionKind = o.kind;
    return node;
  }
}

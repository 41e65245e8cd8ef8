// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import type { TranslationBundle } from '@jupyterlab/translation';
import {
  checkIcon,
  closeIcon,
  infoIcon,
  LabIcon
} from '@jupyterlab/ui-components';

import { element, styledButton } from '../dom';
import { HiddenChars } from '../hiddenchars';
import type { ICellLinks } from '../reveal';
import { Visible } from '../visible';
import { REFUSAL_CODES } from '../generated/vocabulary.js';
import { IToolCall, shortError } from './transcript';

/**
 * The one-line card of a tool call:
 * `.jp-Copilot-ToolCard[data-tool-call-id][data-status]` with its title
 * `.jp-Copilot-ToolCardTitle` and status icon, and `data-kind` when the
 * agent gives the tool's kind (e.g. `execute`). A failed call adds a short
 * error `.jp-Copilot-ToolCardError`; a collapsed `<details>`
 * (`.jp-Copilot-ToolCardDetails`) holds the whole error
 * (`pre.jp-Copilot-ToolCardFull`) and a command's output
 * (`pre.jp-Copilot-ToolCardOutput`), whatever the status. A call that ended
 * because of what the person chose (the conversation's Plan mode, or a card
 * they declined) is no error: it shows a calm notice
 * `.jp-Copilot-ToolCardError.jp-mod-notice` in our words, an information
 * icon and `data-outcome` (`plan-mode` or `declined`), and no raw error. Every text of the
 * agent's shows its hidden characters as escapes (see {@link Visible}).
 */
export namespace ToolCard {
  /**
   * The empty card of a tool call.
   */
  export function create(
    toolCallId: string,
    trans: TranslationBundle
  ): HTMLElement {
    const node = element('div', 'jp-Copilot-ToolCard');
    node.dataset.toolCallId = toolCallId;
    const line = element('div', 'jp-Copilot-ToolCardLine');
    const icon = element('span', 'jp-Copilot-ToolCardIcon');
    icon.setAttribute('role', 'img');
    const cell = styledButton(
      'jp-Copilot-CellLink jp-Copilot-ToolCardCell',
      ''
    );
    cell.hidden = true;
    line.append(icon, element('span', 'jp-Copilot-ToolCardTitle'), cell);
    const details = element('details', 'jp-Copilot-ToolCardDetails');
    details.append(
      element('summary', '', trans.__('Details')),
      element('pre', 'jp-Copilot-ToolCardFull'),
      element('pre', 'jp-Copilot-ToolCardOutput')
    );
    node.append(line, element('div', 'jp-Copilot-ToolCardError'), details);
    return node;
  }

  /**
   * Show a tool call's title, status, error and output.
   */
  export function update(
    node: HTMLElement,
    call: IToolCall,
    links: ICellLinks,
    trans: TranslationBundle
  ): void {
    Private.cellLink(node, call.cellId, links, trans);
    const failed = call.status === 'failed';
    // A line break the agent wrote as CRLF is a line break, not an escape.
    const full = failed ? Private.lines(call.error ?? '').trim() : '';
    const chosen = failed ? Private.personsChoice(full, trans) : null;
    const outcome = chosen?.outcome ?? '';
    if (
      node.dataset.status !== call.status ||
      (node.dataset.outcome ?? '') !== outcome
    ) {
      node.dataset.status = call.status;
      if (outcome) {
        node.dataset.outcome = outcome;
      } else {
        delete node.dataset.outcome;
      }
      const icon = node.querySelector<HTMLElement>('.jp-Copilot-ToolCardIcon')!;
      const props = { tag: 'span' as const, className: 'jp-Copilot-Icon' };
      const svg = (chosen ? infoIcon : Private.ICONS[call.status])?.element(
        props
      );
      icon.replaceChildren(...(svg ? [svg] : []));
      icon.setAttribute(
        'aria-label',
        chosen ? trans.__('Not done') : Private.status(call.status, trans)
      );
      icon.title = icon.getAttribute('aria-label')!;
    }
    const titles = Visible.titles(trans);
    const title = node.querySelector<HTMLElement>('.jp-Copilot-ToolCardTitle')!;
    const name = call.title || trans.__('Tool call');
    Visible.setText(title, name, titles);
    title.title = HiddenChars.escaped(name);
    const short = chosen
      ? chosen.text
      : failed
        ? shortError(full) || trans.__('The tool call failed.')
        : '';
    const error = node.querySelector<HTMLElement>('.jp-Copilot-ToolCardError')!;
    Visible.setText(error, short, titles);
    error.hidden = !failed;
    error.classList.toggle('jp-mod-notice', !!chosen);
    if (call.kind) {
      node.dataset.kind = call.kind;
    } else {
      delete node.dataset.kind;
    }
    // The output is the agent's data: text only, never rendered.
    const output = Private.lines(call.output ?? '');
    const details = node.querySelector<HTMLDetailsElement>(
      '.jp-Copilot-ToolCardDetails'
    )!;
    // The person's own choice needs no error text: the notice says it all.
    const raw = chosen ? '' : full;
    details.hidden = !raw && !output;
    details.querySelector('summary')!.textContent = raw
      ? trans.__('Details')
      : trans.__('Output');
    Private.text(details, '.jp-Copilot-ToolCardFull', raw, titles);
    Private.text(details, '.jp-Copilot-ToolCardOutput', output, titles);
  }
}

namespace Private {
  /**
   * The refusal code and message at the start of a failed call's error:
   * `plan-mode: ...` as an agent writes it, or our tools' error body
   * `{"error": {"code", "message"}}`; `null` for any other error.
   */
  export function refusal(
    error: string
  ): { code: string; message: string } | null {
    const prefix = /^([a-z-]+): ?([^]*)$/.exec(error);
    if (prefix && (REFUSAL_CODES as readonly string[]).includes(prefix[1])) {
      return { code: prefix[1], message: prefix[2].trim() };
    }
    try {
      const body = JSON.parse(error)?.error;
      if (
        typeof body?.code === 'string' &&
        (REFUSAL_CODES as readonly string[]).includes(body.code)
      ) {
        return {
          code: body.code,
          message: typeof body.message === 'string' ? body.message : ''
        };
      }
    } catch {
      // Not our error body: an error like any other.
    }
    return null;
  }

  /**
   * The calm words for a call that ended because of the person's own
   * choice: the conversation's Plan mode, or a card they declined (the
   * server's other reasons for `denied`, a timeout or a closed page, are
   * said as the server wrote them); `null` for any other error.
   */
  export function personsChoice(
    error: string,
    trans: TranslationBundle
  ): { outcome: 'plan-mode' | 'declined'; text: string } | null {
    const found = refusal(error);
    if (found?.code === 'plan-mode') {
      return {
        outcome: 'plan-mode',
        text: trans.__(
          'Not done: this conversation is in Plan mode, where the agent only suggests. To let it propose changes, choose Ask before edits in the mode menu below.'
        )
      };
    }
    if (found?.code === 'denied') {
      return {
        outcome: 'declined',
        text: Private.DECLINED.test(found.message)
          ? trans.__('You declined this.')
          : shortError(found.message) || trans.__('You declined this.')
      };
    }
    return null;
  }

  /**
   * How the server's message for a card the person denied starts
   * (jupyter_copilot/tools/approvals.py); other `denied` messages say why.
   */
  export const DECLINED = /^The person denied/;

  /**
   * A text with its CRLF line breaks as LF.
   */
  export function lines(text: string): string {
    return text.replace(/\r\n/g, '\n');
  }

  /**
   * Show the link to the cell a call names while an open notebook has it:
   * "Cell 3", which brings the cell into view.
   */
  export function cellLink(
    node: HTMLElement,
    cellId: string | undefined,
    links: ICellLinks,
    trans: TranslationBundle
  ): void {
    const link = node.querySelector<HTMLButtonElement>(
      '.jp-Copilot-ToolCardCell'
    )!;
    const place = cellId ? links.find(cellId) : null;
    link.hidden = !place;
    link.onclick = place ? () => void links.reveal(cellId!) : null;
    if (place) {
      link.dataset.cellId = cellId;
      link.textContent = trans.__('Cell %1', place.index + 1);
      link.title = trans.__(
        'Show cell %1 of %2',
        place.index + 1,
        place.panel.context.localPath
      );
    }
  }

  /**
   * Set a part's text, hidden characters as escapes; an empty part is
   * hidden.
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
   * The icon of each final status; a running call shows a spinner (CSS).
   */
  export const ICONS: Record<string, LabIcon | undefined> = {
    completed: checkIcon,
    failed: closeIcon
  };

  /**
   * The status in words, for assistive technology and the tooltip.
   */
  export function status(value: string, trans: TranslationBundle): string {
    switch (value) {
      case 'pending':
        return trans.__('Waiting');
      case 'in_progress':
        return trans.__('Running');
      case 'completed':
        return trans.__('Done');
      case 'failed':
        return trans.__('Failed');
      default:
        return value;
    }
  }
}

// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import type { TranslationBundle } from '@jupyterlab/translation';
import { addIcon, closeIcon, stopIcon } from '@jupyterlab/ui-components';
import { Widget } from '@lumino/widgets';

import type { ContextModel } from '../contextmodel';
import { referenceKey } from '../contextmodel';
import { APPROVAL_MODES } from '../generated/vocabulary.js';
import { oneOf } from '../protocol';
import { element, iconButton, styledButton } from '../dom';
import type { ICellLinks } from '../reveal';
import type { ChatModel } from './model';

import '../../style/mentions.css';
import { AgentPicker } from './agentpicker';
import type { MentionKind } from './mentions';
import { ContextPicker } from './contextpicker';
import { MentionMenu } from './mentionmenu';
import type { MentionSource } from './mentionsource';

/**
 * Where the person writes: the attached cell `.jp-Copilot-ComposerAttachment`,
 * the `textarea` (Enter sends, Shift+Enter starts a new line) and the bar:
 * New conversation `.jp-Copilot-NewConversation`, the Agent and Context
 * pickers, the mode `select.jp-Copilot-ModeSelect`, then Stop
 * `.jp-Copilot-Stop` (while a reply runs) and Send `.jp-Copilot-Send`.
 */
export class Composer extends Widget {
  /**
   * Create the composer of a chat model.
   */
  constructor(options: Composer.IOptions) {
    super();
    this._model = options.model;
    this._context = options.context;
    this._cellLabel = options.cellLabel;
    this._onNew = options.onNewConversation;
    const trans = (this._trans = options.trans);
    this.addClass('jp-Copilot-Composer');
    this._notice = element('div', 'jp-Copilot-ComposerNotice');
    this._notice.setAttribute('role', 'alert');
    this._chip = element('div', 'jp-Copilot-ComposerAttachment');
    // The chip names the cell and is a link to it.
    this._chipLabel = styledButton(
      'jp-Copilot-CellLink jp-Copilot-ComposerAttachmentLabel',
      ''
    );
    this._chipLabel.addEventListener('click', () => {
      const a = this._context.attachment;
      if (a) {
        options.cellLinks.reveal(a.cellId);
      }
    });
    const detach = iconButton(
      'jp-Copilot-Detach',
      closeIcon,
      trans.__('Detach this cell')
    );
    this._chip.append(this._chipLabel, detach);
    this._chips = element('div', 'jp-Copilot-ComposerReferences');
    this._input = document.createElement('textarea');
    this._input.rows = 2;
    this._input.setAttribute('aria-label', trans.__('Message to the agent'));
    this._input.placeholder = trans.__(
      'Ask the agent (Enter sends, Shift+Enter adds a line)'
    );
    this._agent = new AgentPicker(this._model, trans);
    this._contextPicker = new ContextPicker(this._model, trans);
    this._mode = document.createElement('select');
    this._mode.className = 'jp-Copilot-ModeSelect';
    this._mode.setAttribute('aria-label', trans.__('Mode'));
    const newConversation = iconButton(
      'jp-Copilot-NewConversation',
      addIcon,
      trans.__('New conversation')
    );
    this._stop = iconButton(
      'jp-Copilot-Stop',
      stopIcon,
      trans.__('Stop the reply')
    );
    this._stop.append(
      element('span', 'jp-Copilot-StopLabel', trans.__('Stop'))
    );
    this._send = element(
      'button',
      'jp-Copilot-Send',
      trans.__('Send')
    ) as HTMLButtonElement;
    this._send.type = 'button';
    this._send.title = trans.__('Send (Enter)');
    // Stop and Send stay together at the end of the bar, also when it wraps.
    const sending = element('span', 'jp-Copilot-SendGroup');
    sending.append(this._stop, this._send);
    const bar = element('div', 'jp-Copilot-ComposerBar');
    bar.append(
      newConversation,
      this._agent.popover.button,
      this._contextPicker.popover.button,
      this._mode,
      sending
    );
    const box = element('div', 'jp-Copilot-ComposerBox');
    this._mentions = new MentionMenu({
      input: this._input,
      source: options.mentions ?? null,
      kinds: () => this._mentionKinds(),
      onPick: reference => this._context.addReference(reference),
      trans
    });
    box.append(this._mentions.node, this._chip, this._chips, this._input, bar);
    this.node.append(
      this._agent.popover.node,
      this._contextPicker.popover.node,
      this._notice,
      box
    );

    this._input.addEventListener('keydown', this._onKeydown);
    this._input.addEventListener('input', this._renderButtons);
    this._send.addEventListener('click', this._onSend);
    this._stop.addEventListener('click', this._onStop);
    newConversation.addEventListener('click', this._onNew);
    detach.addEventListener('click', this._onDetach);
    this._mode.addEventListener('change', this._onMode);
    this._model.changed.connect(this._render, this);
    this._context.attachmentChanged.connect(this._renderChip, this);
    this._context.referencesChanged.connect(this._renderReferences, this);
    this._render();
    this._renderChip();
    this._renderReferences();
  }

  /** The text being written. */
  get draft(): string {
    return this._input.value;
  }

  /**
   * Put a text in the composer, replacing what is there; never sends it.
   */
  setDraft(text: string): void {
    this._input.value = text;
    this._renderButtons();
  }

  /**
   * Focus the text area, the caret at the end.
   */
  focusInput(): void {
    this._input.focus();
    const end = this._input.value.length;
    this._input.setSelectionRange(end, end);
  }

  /**
   * Disconnect from the models and close the popovers.
   */
  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._model.changed.disconnect(this._render, this);
    this._context.attachmentChanged.disconnect(this._renderChip, this);
    this._context.referencesChanged.disconnect(this._renderReferences, this);
    this._mentions.dispose();
    this._agent.dispose();
    this._contextPicker.dispose();
    super.dispose();
  }

  private _onKeydown = (event: KeyboardEvent): void => {
    // The `@` menu, when open, takes the arrows, Enter, Tab and Escape.
    if (this._mentions.handleKey(event)) {
      return;
    }
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      this._onSend();
    }
  };

  private _onSend = (): void => {
    const text = this._input.value;
    if (!this._canSend()) {
      return;
    }
    this._input.value = '';
    this._renderButtons();
    void this._model.send(text).then(sent => {
      // A refused message comes back, unless the person wrote on meanwhile.
      if (!sent && !this.isDisposed && this._input.value === '') {
        this.setDraft(text);
      }
    });
  };

  private _onStop = (): void => {
    void this._model.stop();
  };

  private _onDetach = (): void => {
    this._context.detach();
    this._input.focus();
  };

  private _onMode = (): void => {
    const mode = oneOf(APPROVAL_MODES, this._mode.value);
    if (mode) {
      void this._model.update({ mode });
    }
  };

  private _canSend(): boolean {
    const m = this._model;
    return (
      !m.isRunning &&
      !!m.catalog &&
      !!m.settings.agentId &&
      this._input.value.trim() !== ''
    );
  }

  /**
   * The kinds `@` offers in this conversation: cells always, files and
   * variables only while their context reference is granted.
   */
  private _mentionKinds(): Set<MentionKind> {
    const s = this._model.settings;
    const kinds = new Set<MentionKind>(['cell']);
    if (!s.chatOnly && s.contextRefs.includes('kernel_variables')) {
      kinds.add('variable');
    }
    if (!s.chatOnly && s.contextRefs.includes('files')) {
      kinds.add('file');
    }
    return kinds;
  }

  private _render(): void {
    const m = this._model;
    // A chip whose grant was withdrawn goes: the server would refuse it.
    const kinds = this._mentionKinds();
    this._context.removeReferences(
      r =>
        (r.kind === 'variable' && !kinds.has('variable')) ||
        (r.kind === 'file' && !kinds.has('file'))
    );
    this.node.dataset.state = m.isRunning ? 'running' : 'idle';
    this._notice.textContent = m.notice;
    this._notice.hidden = !m.notice;
    const modes = m.catalog?.modes ?? [];
    if (this._mode.options.length !== modes.length) {
      this._mode.replaceChildren(
        ...modes.map(mode => {
          const option = new Option(mode.label, mode.id);
          option.title = mode.description;
          return option;
        })
      );
    }
    this._mode.value = m.settings.mode;
    this._mode.disabled = modes.length === 0;
    this._mode.title =
      modes.find(mode => mode.id === m.settings.mode)?.description ??
      this._trans.__('Mode');
    this._renderButtons();
  }

  private _renderButtons = (): void => {
    const running = this._model.isRunning;
    this._stop.hidden = !running;
    this._send.hidden = running;
    this._send.disabled = !this._canSend();
  };

  private _renderChip(): void {
    const a = this._context.attachment;
    this._chip.hidden = !a;
    if (a) {
      this._chip.dataset.cellId = a.cellId;
      this._chipLabel.textContent = this._cellLabel(a);
      this._chip.title = this._trans.__(
        'This cell goes with your next message. The agent may read it and propose an edit to it.'
      );
    }
  }

  private _renderReferences(): void {
    const chips = this._context.references.map(reference => {
      const chip = element('span', 'jp-Copilot-ReferenceChip');
      chip.dataset.kind = reference.kind;
      chip.dataset.key = referenceKey(reference);
      chip.title = Private.chipTitle(reference, this._trans);
      const label = element(
        'span',
        'jp-Copilot-ReferenceLabel',
        reference.kind === 'variable' || reference.kind === 'file'
          ? `@${reference.label}`
          : reference.label
      );
      const remove = iconButton(
        'jp-Copilot-ReferenceRemove',
        closeIcon,
        this._trans.__('Remove %1', reference.label)
      );
      remove.addEventListener('click', () => {
        this._context.removeReferences(r => r === reference);
        this._input.focus();
      });
      chip.append(label, remove);
      return chip;
    });
    this._chips.replaceChildren(...chips);
    this._chips.hidden = chips.length === 0;
  }

  private _model: ChatModel;
  private _trans: TranslationBundle;
  private _chips: HTMLElement;
  private _mentions: MentionMenu;
  private _context: ContextModel;
  private _cellLabel: (a: ContextModel.IAttachment) => string;
  private _onNew: () => void;
  private _notice: HTMLElement;
  private _chip: HTMLElement;
  private _chipLabel: HTMLButtonElement;
  private _input: HTMLTextAreaElement;
  private _agent: AgentPicker;
  private _contextPicker: ContextPicker;
  private _mode: HTMLSelectElement;
  private _stop: HTMLButtonElement;
  private _send: HTMLButtonElement;
}

/**
 * The types of the composer.
 */
export namespace Composer {
  /**
   * The options of a composer.
   */
  export interface IOptions {
    /** The conversation it writes to. */
    model: ChatModel;
    /** The context model that holds the attached cell. */
    context: ContextModel;
    /** The name of an attached cell, e.g. "Cell 3". */
    cellLabel: (attachment: ContextModel.IAttachment) => string;
    /** Links to cells, for the attached cell's chip. */
    cellLinks: ICellLinks;
    /** The words of the panel, in the person's language. */
    trans: TranslationBundle;
    /** What the `+` button does. */
    onNewConversation: () => void;
    /** What `@` offers; none: `@` is plain text. */
    mentions?: MentionSource | null;
  }
}

namespace Private {
  /**
   * What a chip's tooltip says goes with the message.
   */
  export function chipTitle(
    reference: ContextModel.IReference,
    trans: TranslationBundle
  ): string {
    switch (reference.kind) {
      case 'variable':
        return trans.__(
          'A description of the variable %1 (type, shape, first rows) goes with your next message.',
          reference.name
        );
      case 'file':
        return trans.__(
          'The text of %1 goes with your next message.',
          reference.path
        );
      case 'error':
        return trans.__(
          'This cell and its error (%1) go with your next message. The agent may propose an edit to it.',
          reference.ename
        );
      default:
        return trans.__(
          'This cell goes with your next message. The agent may read it and propose an edit to it.'
        );
    }
  }
}

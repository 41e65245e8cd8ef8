// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import { caretDownIcon } from '@jupyterlab/ui-components';
import { IDisposable } from '@lumino/disposable';

import { element } from '../dom';

/**
 * A button that opens a small dialog above it: `aria-haspopup`,
 * `aria-expanded` and `aria-controls` on the button, `role="dialog"` on
 * the popover. Escape or a click outside closes it; Escape gives the focus
 * back to the button.
 */
export class Popover implements IDisposable {
  /**
   * Create the button and its closed popover; the caller places both.
   */
  constructor(options: Popover.IOptions) {
    this.button = document.createElement('button');
    this.button.className = `jp-Copilot-PopoverButton ${options.buttonClass}`;
    this.button.type = 'button';
    this.button.setAttribute('aria-haspopup', 'dialog');
    this.button.setAttribute('aria-expanded', 'false');
    this._label = element('span', 'jp-Copilot-PopoverButtonLabel');
    this._badge = element('span', 'jp-Copilot-Badge');
    this._badge.hidden = true;
    this.button.append(this._label, this._badge);
    this.button.append(
      caretDownIcon.element({ tag: 'span', className: 'jp-Copilot-Caret' })
    );
    this.node = element('div', `jp-Copilot-Popover ${options.popoverClass}`);
    this.node.id = `${options.popoverClass}-${Private.next++}`;
    this.node.setAttribute('role', 'dialog');
    this.node.setAttribute('aria-label', options.title);
    this.node.hidden = true;
    this.node.append(element('div', 'jp-Copilot-PopoverTitle', options.title));
    this.button.setAttribute('aria-controls', this.node.id);
    this.button.addEventListener('click', this._onClick);
  }

  /** The button that opens and closes the popover. */
  readonly button: HTMLButtonElement;

  /** The popover; its content goes after its title. */
  readonly node: HTMLElement;

  /** Whether the popover is open. */
  get isOpen(): boolean {
    return !this.node.hidden;
  }

  /** Whether the popover is disposed. */
  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /**
   * Set the button's visible label.
   */
  set label(text: string) {
    this._label.textContent = text;
  }

  /**
   * Set a short count shown after the label; "" hides it.
   */
  set badge(text: string) {
    this._badge.textContent = text;
    this._badge.hidden = !text;
  }

  /**
   * Open the popover and focus its first control.
   */
  open(): void {
    if (this.isOpen) {
      return;
    }
    this.node.hidden = false;
    this.button.setAttribute('aria-expanded', 'true');
    document.addEventListener('mousedown', this._onOutside, true);
    // On the window, before the app's shortcuts: Escape closes the popover
    // wherever the focus went (a control re-rendered under it drops it).
    window.addEventListener('keydown', this._onKeydown, true);
    this.node
      .querySelector<HTMLElement>('input:not(:disabled), button:not(:disabled)')
      ?.focus();
  }

  /**
   * Close the popover.
   *
   * @param refocus - Whether to give the focus back to the button.
   */
  close(refocus = false): void {
    if (!this.isOpen) {
      return;
    }
    this.node.hidden = true;
    this.button.setAttribute('aria-expanded', 'false');
    document.removeEventListener('mousedown', this._onOutside, true);
    window.removeEventListener('keydown', this._onKeydown, true);
    if (refocus) {
      this.button.focus();
    }
  }

  /**
   * Close and drop the listeners.
   */
  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this.close();
    this.button.removeEventListener('click', this._onClick);
  }

  private _onClick = (): void => {
    if (this.isOpen) {
      this.close();
    } else {
      this.open();
    }
  };

  private _onKeydown = (event: KeyboardEvent): void => {
    if (event.key === 'Escape' && this.isOpen) {
      event.preventDefault();
      event.stopPropagation();
      this.close(true);
    }
  };

  private _onOutside = (event: MouseEvent): void => {
    const target = event.target as Node;
    if (!this.node.contains(target) && !this.button.contains(target)) {
      this.close();
    }
  };

  private _label: HTMLElement;
  private _badge: HTMLElement;
  private _isDisposed = false;
}

/**
 * The types of a popover.
 */
export namespace Popover {
  /**
   * The options of a popover.
   */
  export interface IOptions {
    /** The title, shown on top and given as the dialog's accessible name. */
    title: string;
    /** The class of the button, e.g. `jp-Copilot-AgentPicker`. */
    buttonClass: string;
    /** The class of the popover, e.g. `jp-Copilot-AgentPopover`. */
    popoverClass: string;
  }
}

/**
 * A labelled checkbox with a line of explanation under its label.
 */
export function labelledCheckbox(
  className: string,
  label: string,
  explanation: string
): [HTMLElement, HTMLInputElement] {
  const node = element('label', `jp-Copilot-Check ${className}`);
  const box = document.createElement('input');
  box.type = 'checkbox';
  const text = element('span', 'jp-Copilot-CheckText');
  text.append(
    element('span', 'jp-Copilot-CheckLabel', label),
    element('span', 'jp-Copilot-CheckExplanation', explanation)
  );
  node.append(box, text);
  return [node, box];
}

namespace Private {
  /** A counter for unique popover ids. */
  // eslint-disable-next-line prefer-const -- reassigned as `Private.next`
  export let next = 0;
}

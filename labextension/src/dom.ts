// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import type { LabIcon } from '@jupyterlab/ui-components';

/**
 * Create an element with a class and, optionally, its text.
 */
export function element(
  tag: string,
  className: string,
  text?: string
): HTMLElement {
  const node = document.createElement(tag);
  node.className = className;
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

/**
 * A styled `<button>` of type button with its text.
 */
export function styledButton(
  className: string,
  text: string
): HTMLButtonElement {
  const node = element(
    'button',
    `jp-mod-styled ${className}`,
    text
  ) as HTMLButtonElement;
  node.type = 'button';
  return node;
}

/**
 * A button of type button with an icon and an accessible name, which is
 * also its tooltip.
 */
export function iconButton(
  className: string,
  icon: LabIcon,
  label: string
): HTMLButtonElement {
  const node = element(
    'button',
    `jp-Copilot-IconButton ${className}`
  ) as HTMLButtonElement;
  node.type = 'button';
  node.title = label;
  node.setAttribute('aria-label', label);
  node.append(icon.element({ tag: 'span', className: 'jp-Copilot-Icon' }));
  return node;
}

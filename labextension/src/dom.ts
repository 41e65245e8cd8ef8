// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

/**
 * Create an element with a class and, optionally, its text.
 */
export function element(tag: string, className: string, text?: string): HTMLElement {
  const node = document.createElement(tag);
  node.className = className;
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';

/**
 * Colour the code blocks of a sanitized reply.
 *
 * JupyterLab's Markdown parser highlights code before the sanitizer runs,
 * and the sanitizer then removes every class, the highlighter's with the
 * agent's: in its output they cannot be told apart. So each code block that
 * kept its `language-*` class is highlighted again here, from its text
 * alone: the parser is given a fence holding only that text (which it
 * escapes), and its answer is used only if it is one code block of plain
 * spans with highlighter classes and exactly the same text. Anything else
 * leaves the block as it is, plain.
 */
export async function highlightCode(
  host: HTMLElement,
  parser: IRenderMime.IMarkdownParser | null | undefined
): Promise<void> {
  if (!parser) {
    return;
  }
  const blocks = host.querySelectorAll('pre > code[class^="language-"]');
  for (const code of Array.from(blocks)) {
    const language = code.className.slice('language-'.length);
    const text = code.textContent ?? '';
    if (!Private.LANGUAGE.test(language) || code.children.length > 0) {
      continue;
    }
    const nodes = await Private.highlighted(parser, language, text);
    // The block may have been rendered again meanwhile.
    if (nodes && host.contains(code) && code.textContent === text) {
      code.replaceChildren(...nodes);
    }
  }
}

namespace Private {
  /** A language name as the sanitizer keeps it. */
  export const LANGUAGE = /^[\w+#.-]{1,40}$/;

  /** The fence character, written so that no tool reads it as a template. */
  const BACKTICK = '\u0060';

  /** The classes of CodeMirror's highlighter. */
  const HIGHLIGHT_CLASS = /^(\u037c[0-9a-z]+|tok-[\w-]+|cm-[\w-]+)$/;

  /**
   * The highlighted nodes of `text`, or `null` when the parser's answer is
   * anything but plain spans holding exactly `text`.
   */
  export async function highlighted(
    parser: IRenderMime.IMarkdownParser,
    language: string,
    text: string
  ): Promise<Node[] | null> {
    const body = text.endsWith('\n') ? text.slice(0, -1) : text;
    const runs = Array.from(body.matchAll(/\u0060+/g), m => m[0].length);
    const fence = BACKTICK.repeat(Math.max(2, ...runs) + 1);
    let html: string;
    try {
      html = await parser.render(`${fence}${language}\n${body}\n${fence}\n`);
    } catch {
      return null;
    }
    const doc = new DOMParser().parseFromString(
      `<!doctype html><body>${html}</body>`,
      'text/html'
    );
    const pre = doc.body.firstElementChild;
    const code = pre?.firstElementChild;
    if (
      doc.body.children.length !== 1 ||
      pre?.tagName !== 'PRE' ||
      pre.children.length !== 1 ||
      code?.tagName !== 'CODE'
    ) {
      return null;
    }
    const nodes: Node[] = [];
    for (const child of Array.from(code.childNodes)) {
      if (child.nodeType === child.TEXT_NODE) {
        nodes.push(document.createTextNode(child.textContent ?? ''));
        continue;
      }
      const el = child as Element;
      const classes = (el.getAttribute('class') ?? '').split(/\s+/);
      if (
        child.nodeType !== child.ELEMENT_NODE ||
        el.tagName !== 'SPAN' ||
        el.children.length > 0 ||
        !classes.every(c => HIGHLIGHT_CLASS.test(c))
      ) {
        return null;
      }
      const span = document.createElement('span');
      span.className = classes.join(' ');
      span.textContent = el.textContent;
      nodes.push(span);
    }
    const shown = nodes.map(n => n.textContent).join('');
    if (shown.replace(/\n$/, '') !== body) {
      return null;
    }
    if (text.endsWith('\n') && !shown.endsWith('\n')) {
      nodes.push(document.createTextNode('\n'));
    }
    return nodes;
  }
}

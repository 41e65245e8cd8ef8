// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

/**
 * The proposed text as a review shows it: the editor extensions that
 * highlight its language in a diff, and a proposed new cell's source.
 * Used by the review's view and by the managers that open reviews, so
 * that neither depends on the other.
 */

import type {
  IEditorLanguage,
  IEditorLanguageRegistry
} from '@jupyterlab/codemirror';
import type { Extension } from '@codemirror/state';
import { PathExt } from '@jupyterlab/coreutils';

import { element } from '../dom';
import { within } from '../polling';

/**
 * The part of JupyterLab's editor language registry the diff uses.
 */
export type ILanguages = Pick<
  IEditorLanguageRegistry,
  'findByMIME' | 'findByFileName' | 'getLanguage' | 'highlight'
>;

/**
 * The editor extensions that highlight a cell's language in the diff; none
 * when the language is unknown or fails to load.
 *
 * @param languages - The editor language registry, when there is one.
 * @param mimeType - The cell model's MIME type.
 */
export async function languageExtensions(
  languages: ILanguages | null,
  mimeType: string
): Promise<Extension[]> {
  return Private.support(languages, l => l.findByMIME(mimeType));
}

/**
 * A proposed new cell's source as read-only text, highlighted in the cell's
 * language as JupyterLab highlights code in Markdown: static spans, no
 * editor. A pending cell is all new text, so there is no diff to show, and
 * an editor costs more the longer the notebook: it adds listeners to the
 * window, which already holds some for every cell editor, and its first
 * measure lays out the whole notebook at once.
 *
 * The text is never parsed as HTML. Plain when the language is unknown or
 * takes more than a second to load.
 *
 * @param languages - The editor language registry, when there is one.
 * @param mimeType - The MIME type of the new cell's language.
 * @param source - The proposed source.
 */
export async function highlightedSource(
  languages: ILanguages | null,
  mimeType: string,
  source: string
): Promise<HTMLElement> {
  // A cell's editor shows a lone "\r" as a line break; so does this.
  const text = source.replace(/\r\n?/g, '\n');
  try {
    const found = languages?.findByMIME(mimeType) ?? null;
    if (languages && found) {
      const pre = plainSource('');
      await within(languages.highlight(text, found, pre), 1000);
      return pre;
    }
  } catch {
    // Unknown, failing or slow: plain text below, in a block of its own,
    // so that a late highlight never writes into it.
  }
  return plainSource(text);
}

/**
 * A proposed new cell's source as plain read-only text.
 */
export function plainSource(source: string): HTMLElement {
  return element('pre', 'jp-Copilot-PendingSource', source);
}

/**
 * The editor extensions that highlight a file's language in the diff,
 * found by its name; none when the language is unknown or fails to load.
 *
 * @param languages - The editor language registry, when there is one.
 * @param path - The file's path.
 */
export async function fileLanguageExtensions(
  languages: ILanguages | null,
  path: string
): Promise<Extension[]> {
  return Private.support(languages, l =>
    l.findByFileName(PathExt.basename(path))
  );
}

namespace Private {
  /**
   * The support extension of the language a lookup finds, loaded within a
   * second; none otherwise.
   */
  export async function support(
    languages: ILanguages | null,
    find: (languages: ILanguages) => IEditorLanguage | null
  ): Promise<Extension[]> {
    try {
      const found = languages ? find(languages) : null;
      const language = found
        ? await within(languages!.getLanguage(found), 1000)
        : null;
      return language?.support ? [language.support] : [];
    } catch {
      return [];
    }
  }
}

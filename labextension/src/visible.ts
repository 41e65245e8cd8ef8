// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import type { TranslationBundle } from '@jupyterlab/translation';

import type { HiddenCharacter } from './generated/vocabulary';
import { HiddenChars } from './hiddenchars';

/**
 * Text shown so that nothing in it hides: each hidden character (see
 * {@link HiddenChars}) becomes `span.jp-Copilot-HiddenChar[data-kind]`
 * holding its escape, `⟨U+202E⟩`, in a style of its own, so that an agent
 * cannot pass off the six letters `U+202E` it typed for one. The character
 * itself is not in the page, so it reorders and hides nothing.
 */
export namespace Visible {
  /**
   * The tooltip of each kind of hidden character.
   */
  export type Titles = Readonly<Record<HiddenCharacter, string>>;

  /**
   * The tooltips, in the person's language.
   */
  export function titles(trans: TranslationBundle): Titles {
    return {
      bidi: trans.__('A character that changes the direction of text'),
      invisible: trans.__('An invisible character'),
      control: trans.__('A control character')
    };
  }

  /**
   * The element that stands for one hidden character.
   */
  export function escapeNode(
    char: string,
    kind: HiddenCharacter,
    titles: Titles
  ): HTMLElement {
    const node = document.createElement('span');
    node.className = 'jp-Copilot-HiddenChar';
    node.dataset.kind = kind;
    node.textContent = HiddenChars.escape(char);
    node.title = titles[kind];
    return node;
  }

  /**
   * Show a text in a node, in place of its content, with every hidden
   * character as its escape.
   */
  export function setText(node: HTMLElement, text: string, titles: Titles) {
    node.replaceChildren(...nodes(text, titles));
  }

  /**
   * The nodes that show a text: text nodes and escapes.
   */
  export function nodes(text: string, titles: Titles): Node[] {
    return HiddenChars.segments(text).map(part =>
      part.kind === null
        ? document.createTextNode(part.text)
        : escapeNode(part.text, part.kind, titles)
    );
  }

  /**
   * Replace every hidden character in the text under `root` (markup made
   * by another, e.g. highlighted code) with its escape.
   *
   * @returns How many characters were replaced.
   */
  export function markIn(root: Node, titles: Titles): number {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    const texts: Text[] = [];
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      texts.push(node as Text);
    }
    let count = 0;
    for (const text of texts) {
      const value = text.data;
      const found = HiddenChars.find(value).length;
      if (found && !text.parentElement?.closest('.jp-Copilot-HiddenChar')) {
        text.replaceWith(...nodes(value, titles));
        count += found;
      }
    }
    return count;
  }

  /**
   * The sentence a review shows when its texts hold hidden characters:
   * "This change contains invisible or direction-changing characters,
   * shown as ⟨U+202E⟩." with up to three of them; `null` when they hold
   * none. A lone carriage return is a line break in a diff, not hidden.
   *
   * @param texts - The texts the review shows, e.g. the cell's source and
   *   the proposal.
   */
  export function reviewNotice(
    texts: readonly string[],
    trans: TranslationBundle,
    titles: Titles
  ): HTMLElement | null {
    const found = new Set<string>();
    for (const text of texts) {
      HiddenChars.find(text.replace(/\r\n?/g, '\n')).forEach(c => found.add(c));
    }
    if (!found.size) {
      return null;
    }
    const node = document.createElement('div');
    node.className = 'jp-Copilot-HiddenNotice';
    node.setAttribute('role', 'note');
    const shown = [...found].slice(0, 3);
    const marker = '\u0000';
    const words = trans.__(
      'This change contains invisible or direction-changing characters, shown as %1.',
      marker
    );
    const [before, after = ''] = words.split(marker);
    node.append(before);
    shown.forEach((char, i) => {
      if (i > 0) {
        node.append(', ');
      }
      node.append(
        escapeNode(char, HiddenChars.kindOf(char) ?? 'invisible', titles)
      );
    });
    node.append(after);
    return node;
  }
}

// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import { unifiedMergeView } from '@codemirror/merge';
import { EditorState, Extension } from '@codemirror/state';
import {
  EditorView,
  highlightSpecialChars,
  ViewPlugin
} from '@codemirror/view';
import { jupyterTheme } from '@jupyterlab/codemirror';

import { HiddenChars } from '../hiddenchars';
import { Visible } from '../visible';

/**
 * The buttons each changed hunk gets, when the person may keep or drop
 * hunks one by one.
 */
export interface IHunkControls {
  /** The words of the button that keeps the hunk (it stops being marked). */
  keep: string;
  /** The words of the button that drops the hunk (it reverts to the cell's). */
  drop: string;
  /** What keeping a hunk does, as a tooltip. */
  keepTitle: string;
  /** What dropping a hunk does, as a tooltip. */
  dropTitle: string;
  /**
   * Whether the hunks are fixed for now (Keep refused or under way): the
   * buttons are then disabled, also those the editor draws later.
   */
  isLocked: () => boolean;
}

/**
 * Enable or disable the hunk buttons of a diff made by {@link createDiff}.
 */
export function lockHunks(parent: HTMLElement, locked: boolean): void {
  parent.shadowRoot
    ?.querySelectorAll<HTMLButtonElement>(
      '.jp-Copilot-HunkKeep, .jp-Copilot-HunkDrop'
    )
    .forEach(button => (button.disabled = locked));
}

/**
 * Show a read-only unified diff of a text against a proposed one: the
 * proposal with the removed lines shown in place, unchanged stretches
 * collapsed. Only the review chunks import this module, so that the merge
 * view stays out of the start-up bundle.
 *
 * The editor lives in a shadow root of `parent`, under
 * `.jp-Copilot-DiffText`. In the document, every new editor rewrites the
 * style element that holds the editors' rules (the style-mod that
 * JupyterLab ships does so even when nothing changed), and the editor then
 * reads the fonts' state, which makes the browser recalculate the style of
 * every cell of the notebook at once: about 100 ms in a notebook of 2,000
 * cells. In a shadow root the rules go to that root's adopted style sheet
 * instead, so a review touches only its own cell's layout.
 *
 * The editor of the last diff closed is taken over when there is one (see
 * {@link releaseDiff}), moved here with a new state. A new editor adds
 * listeners to the window and the document, which in a long notebook
 * already hold some for every cell editor, so that each addition and each
 * removal costs more the longer the notebook; a new state costs the same
 * in 10 cells as in 2,000.
 *
 * With `hunks`, each changed hunk has a button to keep it and one to drop
 * it; dropping reverts that hunk in the editor's document, which stays
 * read-only to the keyboard. The editor's document is then the proposal
 * minus the dropped hunks.
 *
 * @param parent - The element the editor goes into.
 * @param original - The current text.
 * @param proposed - The proposed text.
 * @param extensions - More editor extensions, e.g. a language for highlighting.
 * @param hunks - The per-hunk buttons; none when `null`.
 * @returns The editor; give it back with {@link releaseDiff} when the view
 *   that holds it goes.
 */
export function createDiff(
  parent: HTMLElement,
  original: string,
  proposed: string,
  extensions: readonly Extension[] = [],
  hunks: IHunkControls | null = null
): EditorView {
  const root = parent.shadowRoot ?? parent.attachShadow({ mode: 'open' });
  const box = document.createElement('div');
  box.className = 'jp-Copilot-DiffText';
  root.replaceChildren(box);
  const state = EditorState.create({
    doc: proposed,
    extensions: [
      unifiedMergeView({
        original,
        mergeControls: hunks ? Private.hunkButton(hunks) : false,
        syntaxHighlightDeletions: true,
        collapseUnchanged: { margin: 3, minSize: 6 }
      }),
      EditorState.readOnly.of(true),
      EditorView.editable.of(false),
      EditorView.lineWrapping,
      jupyterTheme,
      Private.THEME,
      ...extensions
    ]
  });
  const spare = Private.kept.spare;
  Private.kept.spare = null;
  if (!spare) {
    return new EditorView({ parent: box, root, state });
  }
  // Its rules go to this root's style sheet, then its content is rebuilt.
  spare.setRoot(root);
  box.append(spare.dom);
  spare.setState(state);
  return spare;
}

/**
 * Show every hidden character of a diff (see {@link HiddenChars}) as its
 * escape, `span.jp-Copilot-HiddenChar`, on both sides: in the proposal as
 * CodeMirror's special characters, and in the removed lines, which the
 * merge view draws itself outside the document, by marking what it drew.
 * The characters themselves are then not in the page, so they reorder and
 * hide nothing.
 *
 * @param titles - The escapes' tooltips.
 */
export function showHidden(titles: Visible.Titles): Extension {
  return [
    highlightSpecialChars({
      specialChars: HiddenChars.regExp(),
      render: code => {
        const char = String.fromCodePoint(code);
        return Visible.escapeNode(
          char,
          HiddenChars.kindOf(char) ?? 'control',
          titles
        );
      }
    }),
    ViewPlugin.define(view => new Private.RemovedLines(view, titles))
  ];
}

/**
 * Give back the editor of a diff whose view goes: it leaves the page, keeps
 * nothing of the diff, and the next {@link createDiff} takes it over. One is
 * kept; any other is destroyed.
 *
 * @param editor - An editor made by {@link createDiff}, no longer used by
 *   its view.
 */
export function releaseDiff(editor: EditorView): void {
  if (editor === Private.kept.spare) {
    return;
  }
  editor.dom.remove();
  if (Private.kept.spare) {
    editor.destroy();
    return;
  }
  try {
    editor.setState(EditorState.create());
  } catch {
    // In the middle of an update of its own: not fit to be taken over.
    editor.destroy();
    return;
  }
  Private.kept.spare = editor;
}

namespace Private {
  /**
   * The editor of the last diff closed, empty and out of the page, for the
   * next diff to take over.
   */
  export const kept: { spare: EditorView | null } = { spare: null };

  /**
   * The look of the diff: JupyterLab's code font, and the colours of added,
   * removed and collapsed lines from the theme's variables. One style
   * module for every diff, so it is added to the shared sheet only once.
   */
  export const THEME = EditorView.theme({
    '&': {
      fontFamily: 'var(--jp-code-font-family)',
      fontSize: 'var(--jp-code-font-size)',
      lineHeight: 'var(--jp-code-line-height)',
      height: 'auto'
    },
    '&.cm-focused': { outline: 'none' },
    '&.cm-merge-b .cm-changedLine': {
      background:
        'color-mix(in srgb, var(--jp-success-color1) 16%, transparent)'
    },
    '&.cm-merge-b .cm-changedText': {
      background:
        'color-mix(in srgb, var(--jp-success-color1) 35%, transparent)'
    },
    '.cm-deletedChunk': {
      background: 'color-mix(in srgb, var(--jp-error-color1) 14%, transparent)'
    },
    '.cm-deletedChunk .cm-deletedText': {
      background: 'color-mix(in srgb, var(--jp-error-color1) 30%, transparent)'
    },
    '& button[disabled]': { opacity: '0.45', cursor: 'not-allowed' },
    '.cm-collapsedLines': {
      background: 'var(--jp-layout-color2)',
      color: 'var(--jp-ui-font-color2)'
    },
    // As in the page's style sheet: the diff lives in a shadow root.
    '.jp-Copilot-HiddenChar': {
      display: 'inline-block',
      unicodeBidi: 'isolate',
      direction: 'ltr',
      margin: '0 1px',
      padding: '0 2px',
      border: '1px solid var(--jp-warn-color1)',
      borderRadius: '2px',
      background: 'color-mix(in srgb, var(--jp-warn-color1) 22%, transparent)',
      color: 'var(--jp-ui-font-color0)',
      fontSize: '0.85em',
      lineHeight: 'normal',
      fontStyle: 'normal',
      fontWeight: 'bold'
    },
    '.jp-Copilot-HiddenChar[data-kind="bidi"]': {
      borderColor: 'var(--jp-error-color1)',
      background: 'color-mix(in srgb, var(--jp-error-color1) 25%, transparent)'
    }
  });

  /**
   * Marks the hidden characters of the removed lines once the merge view
   * has drawn them. They are drawn once per chunk and kept, so each chunk
   * is marked once; the editor ignores changes inside what it drew as a
   * widget.
   */
  export class RemovedLines {
    constructor(
      readonly view: EditorView,
      readonly titles: Visible.Titles
    ) {
      this.update();
    }

    update(): void {
      this.view.requestMeasure({
        key: this,
        read: () => null,
        write: () => {
          this.view.dom
            .querySelectorAll<HTMLElement>(
              '.cm-deletedChunk:not([data-hidden-marked])'
            )
            .forEach(chunk => {
              chunk.dataset.hiddenMarked = 'true';
              Visible.markIn(chunk, this.titles);
            });
        }
      });
    }
  }

  /**
   * Render the keep or drop button of a hunk.
   */
  export function hunkButton(
    words: IHunkControls
  ): (
    type: 'accept' | 'reject',
    action: (e: MouseEvent) => void
  ) => HTMLElement {
    return (type, action) => {
      const keep = type === 'accept';
      const button = document.createElement('button');
      button.type = 'button';
      // The merge view's own colours: green to keep, red to drop.
      button.name = type;
      button.className = keep ? 'jp-Copilot-HunkKeep' : 'jp-Copilot-HunkDrop';
      button.textContent = keep ? words.keep : words.drop;
      button.title = keep ? words.keepTitle : words.dropTitle;
      button.disabled = words.isLocked();
      button.addEventListener('click', event => {
        if (!words.isLocked()) {
          action(event);
        }
      });
      return button;
    };
  }
}

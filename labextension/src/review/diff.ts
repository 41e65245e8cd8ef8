// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import { unifiedMergeView } from '@codemirror/merge';
import { EditorState, Extension } from '@codemirror/state';
import { EditorView } from '@codemirror/view';
import { jupyterTheme } from '@jupyterlab/codemirror';

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
}

/**
 * Show a read-only unified diff of a text against a proposed one: the
 * proposal with the removed lines shown in place, unchanged stretches
 * collapsed. Only the review chunks import this module, so that the merge
 * view stays out of the start-up bundle.
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
 * @returns The editor; destroy it with the view that holds it.
 */
export function createDiff(
  parent: HTMLElement,
  original: string,
  proposed: string,
  extensions: readonly Extension[] = [],
  hunks: IHunkControls | null = null
): EditorView {
  return new EditorView({
    parent,
    state: EditorState.create({
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
        ...extensions
      ]
    })
  });
}

namespace Private {
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
      button.addEventListener('click', action);
      return button;
    };
  }
}

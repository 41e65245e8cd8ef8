// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import { unifiedMergeView } from '@codemirror/merge';
import { EditorState, Extension } from '@codemirror/state';
import { EditorView } from '@codemirror/view';
import { jupyterTheme } from '@jupyterlab/codemirror';

/**
 * Show a read-only unified diff of a text against a proposed one: the
 * proposal with the removed lines shown in place, unchanged stretches
 * collapsed. Only the review chunks import this module, so that the merge
 * view stays out of the start-up bundle.
 *
 * @param parent - The element the editor goes into.
 * @param original - The current text.
 * @param proposed - The proposed text.
 * @param extensions - More editor extensions, e.g. a language for highlighting.
 * @returns The editor; destroy it with the view that holds it.
 */
export function createDiff(
  parent: HTMLElement,
  original: string,
  proposed: string,
  extensions: readonly Extension[] = []
): EditorView {
  return new EditorView({
    parent,
    state: EditorState.create({
      doc: proposed,
      extensions: [
        unifiedMergeView({
          original,
          mergeControls: false,
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

// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import { getChunks, unifiedMergeView } from '@codemirror/merge';
import {
  EditorState,
  Extension,
  RangeSetBuilder,
  StateEffect,
  StateField
} from '@codemirror/state';
import {
  Decoration,
  DecorationSet,
  EditorView,
  highlightSpecialChars,
  ViewPlugin,
  ViewUpdate
} from '@codemirror/view';
import { jupyterTheme } from '@jupyterlab/codemirror';

import { HiddenChars } from '../hiddenchars';
import { Visible } from '../visible';
import type { HunkDecision, IHunk } from './hunks';

/**
 * The buttons each changed hunk gets, when the person may keep or drop
 * hunks one by one, and the words of a decided hunk.
 */
export interface IHunkControls {
  /** The words of the button that keeps the hunk. */
  keep: string;
  /** The words of the button that drops the hunk (it stays as the cell has it). */
  drop: string;
  /** What keeping a hunk does, as a tooltip. */
  keepTitle: string;
  /** What dropping a hunk does, as a tooltip. */
  dropTitle: string;
  /** The mark of a kept hunk. */
  kept: string;
  /** The mark of a dropped hunk. */
  dropped: string;
  /** The button that takes a keep back. */
  undoKeep: string;
  /** The button that takes a drop back. */
  undoDrop: string;
  /** What taking a decision back does, as a tooltip. */
  undoTitle: string;
  /**
   * Whether the hunks are fixed for now (Keep refused or under way): the
   * buttons are then disabled, also those the editor draws later.
   */
  isLocked: () => boolean;
  /** Called after the person decided a hunk or took a decision back. */
  onDecide: () => void;
}

/**
 * The hunks of a diff made by {@link createDiff} and the person's decisions
 * about them, by the hunk's `fromB`.
 */
export function hunkDecisions(view: EditorView): {
  hunks: IHunk[];
  decisions: ReadonlyMap<number, HunkDecision>;
} {
  const hunks = [...(getChunks(view.state)?.chunks ?? [])];
  const decisions =
    view.state.field(Private.decisions, false)?.decisions ?? new Map();
  return { hunks, decisions };
}

/**
 * Enable or disable the hunk buttons of a diff made by {@link createDiff}.
 */
export function lockHunks(parent: HTMLElement, locked: boolean): void {
  parent.shadowRoot
    ?.querySelectorAll<HTMLButtonElement>(
      '.jp-Copilot-HunkKeep, .jp-Copilot-HunkDrop, .jp-Copilot-HunkUndo'
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
 * With `hunks`, each changed hunk has a row of its own above its lines,
 * clear of the text, with a button to keep it and one to drop it. The
 * editor's document stays the proposal: a decision only marks the hunk
 * (`data-decision` on its removed lines and its added lines, and the words
 * of its row, with a button to take it back); {@link hunkDecisions} reads
 * the decisions.
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
        mergeControls: hunks ? Private.hunkControls(hunks) : false,
        syntaxHighlightDeletions: true,
        collapseUnchanged: { margin: 3, minSize: 6 }
      }),
      EditorState.readOnly.of(true),
      EditorView.editable.of(false),
      EditorView.lineWrapping,
      jupyterTheme,
      Private.THEME,
      ...(hunks ? [Private.decisions] : []),
      ...extensions
    ]
  });
  const spare = Private.kept.spare;
  Private.kept.spare = null;
  if (spare) {
    try {
      // Its rules go to this root's style sheet, then its content is rebuilt.
      spare.setRoot(root);
      box.append(spare.dom);
      spare.setState(state);
      return spare;
    } catch {
      // In the middle of an update of its own: not fit to be taken over.
      spare.dom.remove();
      spare.destroy();
    }
  }
  return new EditorView({ parent: box, root, state });
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
 * Give back the editor of a diff whose view goes: it leaves the page at
 * once, and the next {@link createDiff} takes it over. One is kept; any
 * other is destroyed. One not taken over within a second is emptied then,
 * at the page's next idle time, and keeps nothing of the diff.
 *
 * It is not emptied at once because a new state makes the editor measure
 * itself at the next frame, and a measure reads the layout of the whole
 * page: when a new proposal supersedes a review, or an abort withdraws
 * one, the page lays out the notebook in that frame anyway, and in a long
 * notebook a second layout of every cell, or a frame more, would delay the
 * agent's next call.
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
  Private.kept.spare = editor;
  Private.emptyWhenIdle(editor);
}

namespace Private {
  /**
   * The editor of the last diff closed, out of the page (and emptied once
   * the page is idle), for the next diff to take over.
   */
  export const kept: { spare: EditorView | null } = { spare: null };

  /**
   * How long a released editor keeps its diff before it is emptied, at
   * the page's next idle time, in milliseconds: an agent's next proposal
   * usually takes it over before, with a state of its own.
   */
  export const EMPTY_AFTER = 1000;

  /**
   * Empty a released editor {@link EMPTY_AFTER} milliseconds later, once
   * the page is idle, unless a diff took it over first.
   */
  export function emptyWhenIdle(editor: EditorView): void {
    const empty = (): void => {
      if (kept.spare !== editor) {
        return;
      }
      try {
        editor.setState(EditorState.create());
      } catch {
        // In the middle of an update of its own: not fit to be taken over.
        kept.spare = null;
        editor.destroy();
      }
    };
    window.setTimeout(() => {
      if (kept.spare !== editor) {
        return;
      }
      if (typeof window.requestIdleCallback === 'function') {
        window.requestIdleCallback(empty, { timeout: EMPTY_AFTER });
      } else {
        empty();
      }
    }, EMPTY_AFTER);
  }

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
    // A hunk's buttons get a row of their own above its lines: drawn over
    // the lines' end, as the merge view places them, they would hide the
    // end of a long changed line.
    '.cm-deletedChunk .cm-chunkButtons': {
      position: 'static',
      display: 'flex',
      justifyContent: 'flex-end',
      margin: '0 0 0 -6px',
      padding: '2px 4px',
      background: 'var(--jp-layout-color2)',
      borderTop: 'var(--jp-border-width) solid var(--jp-border-color2)'
    },
    '.jp-Copilot-HunkControls': {
      display: 'flex',
      flexWrap: 'wrap',
      alignItems: 'center',
      gap: '4px'
    },
    '.jp-Copilot-HunkControls button': {
      fontFamily: 'var(--jp-ui-font-family)',
      fontSize: 'var(--jp-ui-font-size1)',
      lineHeight: '18px'
    },
    '.cm-deletedChunk button.jp-Copilot-HunkUndo': {
      border: 'var(--jp-border-width) solid var(--jp-border-color1)',
      background: 'var(--jp-layout-color1)',
      color: 'var(--jp-ui-font-color1)'
    },
    '.jp-Copilot-HunkState': {
      padding: '0 6px',
      borderRadius: '3px',
      fontFamily: 'var(--jp-ui-font-family)',
      fontSize: 'var(--jp-ui-font-size1)',
      fontWeight: '600',
      color: 'var(--jp-ui-font-color0)'
    },
    '.jp-Copilot-HunkState[data-decision="keep"]': {
      background:
        'color-mix(in srgb, var(--jp-success-color1) 30%, transparent)'
    },
    '.jp-Copilot-HunkState[data-decision="drop"]': {
      background: 'color-mix(in srgb, var(--jp-error-color1) 30%, transparent)'
    },
    // A kept hunk: its removed lines go, struck through.
    '.cm-deletedChunk[data-decision="keep"] .cm-deletedLine': {
      textDecoration: 'line-through',
      opacity: '0.7'
    },
    // A dropped hunk: its removed lines stay as they are, untinted; its
    // added lines are struck through and not tinted as added.
    '.cm-deletedChunk[data-decision="drop"]': { background: 'transparent' },
    '.cm-deletedChunk[data-decision="drop"] .cm-deletedText': {
      background: 'transparent'
    },
    '&.cm-merge-b .cm-line.jp-Copilot-HunkDropped': {
      background: 'transparent',
      textDecoration: 'line-through',
      opacity: '0.7'
    },
    '&.cm-merge-b .jp-Copilot-HunkDropped .cm-changedText': {
      background: 'transparent'
    },
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
   * is marked once.
   *
   * The editor reads every change of its content as typed: a change it did
   * not make itself has it read its content and measure itself again, in a
   * frame of its own, and in a long notebook each frame lays out every
   * cell. So a chunk changes only when it holds a hidden character; which
   * chunks were looked at is kept here, not in the page.
   */
  export class RemovedLines {
    constructor(
      readonly view: EditorView,
      readonly titles: Visible.Titles
    ) {
      this._mark();
    }

    /**
     * Mark again after a transaction or a change of the part drawn, which
     * may draw removed lines; not after the editor only measured itself,
     * which draws none.
     */
    update(update: ViewUpdate): void {
      if (update.transactions.length > 0 || update.viewportChanged) {
        this._mark();
      }
    }

    private _mark(): void {
      this.view.requestMeasure({
        key: this,
        read: () => null,
        write: () => {
          this.view.dom
            .querySelectorAll<HTMLElement>('.cm-deletedChunk')
            .forEach(chunk => {
              if (!this._seen.has(chunk)) {
                this._seen.add(chunk);
                Visible.markIn(chunk, this.titles);
              }
            });
        }
      });
    }

    private _seen = new WeakSet<HTMLElement>();
  }

  /**
   * Set or clear the decision about the hunk that starts at `at` (its
   * `fromB`).
   */
  export const decide = StateEffect.define<{
    at: number;
    decision: HunkDecision | null;
  }>();

  /**
   * The person's decisions about the hunks, and the marks of the added
   * lines of the decided ones. The document never changes, so the hunks
   * and their positions stay as they are.
   */
  export const decisions = StateField.define<{
    decisions: ReadonlyMap<number, HunkDecision>;
    marks: DecorationSet;
  }>({
    create: () => ({ decisions: new Map(), marks: Decoration.none }),
    update(value, tr) {
      const effects = tr.effects.filter(e => e.is(decide));
      if (!effects.length) {
        return value;
      }
      const next = new Map(value.decisions);
      for (const effect of effects) {
        const { at, decision } = (
          effect as StateEffect<{
            at: number;
            decision: HunkDecision | null;
          }>
        ).value;
        if (decision) {
          next.set(at, decision);
        } else {
          next.delete(at);
        }
      }
      return { decisions: next, marks: lineMarks(tr.state, next) };
    },
    provide: field => EditorView.decorations.from(field, v => v.marks)
  });

  /**
   * A class on each added line of a decided hunk.
   */
  function lineMarks(
    state: EditorState,
    decided: ReadonlyMap<number, HunkDecision>
  ): DecorationSet {
    const builder = new RangeSetBuilder<Decoration>();
    const doc = state.doc;
    for (const chunk of getChunks(state)?.chunks ?? []) {
      const decision = decided.get(chunk.fromB);
      const end = Math.min(chunk.toB, doc.length);
      if (!decision || chunk.fromB >= end) {
        continue;
      }
      const mark = Decoration.line({
        class:
          decision === 'keep'
            ? 'jp-Copilot-HunkKept'
            : 'jp-Copilot-HunkDropped',
        attributes: { 'data-decision': decision }
      });
      for (let pos = chunk.fromB; pos < end;) {
        const line = doc.lineAt(pos);
        builder.add(line.from, line.from, mark);
        pos = line.to + 1;
      }
    }
    return builder.finish();
  }

  /**
   * Render the controls of a hunk: the merge view asks for an accept and a
   * reject control; the first holds them all (Keep change and Drop change,
   * or the decision and the button that takes it back), the second is
   * empty. The merge view's own actions, which rewrite the document, are
   * not used.
   */
  export function hunkControls(
    words: IHunkControls
  ): (
    type: 'accept' | 'reject',
    action: (e: MouseEvent) => void
  ) => HTMLElement {
    return type => {
      const row = document.createElement('span');
      if (type === 'reject') {
        row.hidden = true;
        return row;
      }
      row.className = 'jp-Copilot-HunkControls';
      renderControls(row, null, words);
      return row;
    };
  }

  function renderControls(
    row: HTMLElement,
    decision: HunkDecision | null,
    words: IHunkControls
  ): void {
    const button = (
      className: string,
      name: string,
      text: string,
      title: string,
      next: HunkDecision | null
    ): HTMLButtonElement => {
      const b = document.createElement('button');
      b.type = 'button';
      // The merge view's own colours: green to keep, red to drop.
      b.name = name;
      b.className = className;
      b.textContent = text;
      b.title = title;
      b.disabled = words.isLocked();
      b.addEventListener('click', event => {
        event.preventDefault();
        if (!words.isLocked()) {
          setDecision(row, next, words);
        }
      });
      return b;
    };
    if (!decision) {
      row.replaceChildren(
        button(
          'jp-Copilot-HunkKeep',
          'accept',
          words.keep,
          words.keepTitle,
          'keep'
        ),
        button(
          'jp-Copilot-HunkDrop',
          'reject',
          words.drop,
          words.dropTitle,
          'drop'
        )
      );
      return;
    }
    const state = document.createElement('span');
    state.className = 'jp-Copilot-HunkState';
    state.dataset.decision = decision;
    state.textContent = decision === 'keep' ? words.kept : words.dropped;
    row.replaceChildren(
      state,
      button(
        'jp-Copilot-HunkUndo',
        'undo',
        decision === 'keep' ? words.undoKeep : words.undoDrop,
        words.undoTitle,
        null
      )
    );
  }

  /**
   * Record a decision about the hunk whose row this is, and show it.
   */
  function setDecision(
    row: HTMLElement,
    decision: HunkDecision | null,
    words: IHunkControls
  ): void {
    const chunkNode = row.closest<HTMLElement>('.cm-deletedChunk');
    const editor = row.closest<HTMLElement>('.cm-editor');
    const view = editor && EditorView.findFromDOM(editor);
    if (!chunkNode || !view) {
      return;
    }
    const at = view.posAtDOM(chunkNode);
    const chunk = getChunks(view.state)?.chunks.find(
      ch => ch.fromB <= at && ch.endB >= at
    );
    if (!chunk) {
      return;
    }
    view.dispatch({ effects: decide.of({ at: chunk.fromB, decision }) });
    if (decision) {
      chunkNode.dataset.decision = decision;
    } else {
      delete chunkNode.dataset.decision;
    }
    // In the diff's shadow root, that root knows the element in focus.
    const root = row.getRootNode() as Document | ShadowRoot;
    const focused = row.contains(root.activeElement);
    renderControls(row, decision, words);
    if (focused) {
      // The button pressed is gone: the next one of the row takes the focus.
      row.querySelector('button')?.focus();
    }
    words.onDecide();
  }
}

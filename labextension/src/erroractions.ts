// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import type { JupyterFrontEnd } from '@jupyterlab/application';
import type { Cell } from '@jupyterlab/cells';
import type { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import type { TranslationBundle } from '@jupyterlab/translation';
import { IDisposable } from '@lumino/disposable';
import { Debouncer } from '@lumino/polling';

import type { Bridge } from './bridge';
import { CommandIDs } from './commands';
import type { ContextModel } from './contextmodel';
import { styledButton } from './dom';
import { sourceHash } from './hash';
import type { CopilotPanel } from './panel';
import { pollUntil } from './polling';
import { budgetError, firstError } from './tracebacks';

import '../style/erroractions.css';

/**
 * "Fix" and "Explain" beside the output of every code cell whose outputs
 * hold an error, `.jp-Copilot-ErrorActions` with `.jp-Copilot-ErrorFix` and
 * `.jp-Copilot-ErrorExplain`. They run the commands of {@link
 * addErrorCommands}.
 */
export class ErrorActions implements IDisposable {
  /**
   * Watch the open notebooks.
   */
  constructor(options: ErrorActions.IOptions) {
    this._notebooks = options.notebooks;
    this._commands = options.commands;
    this._trans = options.trans;
    this._allowed = options.allowed;
    this._notebooks.widgetAdded.connect(this._onAdded, this);
    this._notebooks.forEach(panel => this._watch(panel));
  }

  /** Whether it is disposed. */
  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /**
   * Stop watching; the buttons shown stay until their cells change.
   */
  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._notebooks.widgetAdded.disconnect(this._onAdded, this);
  }

  private _onAdded(_: INotebookTracker, panel: NotebookPanel): void {
    this._watch(panel);
  }

  private _watch(panel: NotebookPanel): void {
    // Outputs come in bursts while a cell runs: one look per quiet moment.
    const sync = new Debouncer(() => this._sync(panel), 50);
    const schedule = () => {
      if (!this._isDisposed) {
        void sync.invoke();
      }
    };
    const watched = new WeakSet<object>();
    const watchCells = () => {
      const cells = panel.content.model?.cells;
      if (!cells) {
        return;
      }
      for (let i = 0; i < cells.length; i++) {
        const model = cells.get(i);
        if (model.type === 'code' && !watched.has(model)) {
          watched.add(model);
          (
            model as import('@jupyterlab/cells').ICodeCellModel
          ).outputs.changed.connect(schedule);
        }
      }
      schedule();
    };
    void panel.context.ready.then(() => {
      panel.content.model?.cells.changed.connect(watchCells);
      watchCells();
    });
    panel.disposed.connect(() => sync.dispose());
  }

  /**
   * Show the buttons beside each cell whose outputs hold an error, and only
   * there.
   */
  private _sync(panel: NotebookPanel): void {
    if (panel.isDisposed) {
      return;
    }
    if (this._policy === 'unknown') {
      if (
        panel.content.widgets.some(
          cell => cell.model.type === 'code' && Private.hasError(cell)
        )
      ) {
        // Asked once, when the first error shows: a policy without cell
        // outputs would refuse the message the buttons prepare.
        this._policy = 'asking';
        void this._allowed()
          .catch(() => true)
          .then(allows => {
            this._policy = allows ? 'allows' : 'refuses';
            this._notebooks.forEach(p => this._sync(p));
          });
      }
      return;
    }
    if (this._policy === 'asking') {
      return;
    }
    const allows = this._policy === 'allows';
    for (const cell of panel.content.widgets) {
      const wrapper = cell.node.querySelector(
        ':scope > .jp-Cell-outputWrapper'
      );
      const shown = wrapper?.querySelector(':scope > .jp-Copilot-ErrorActions');
      const error =
        allows && cell.model.type === 'code' && Private.hasError(cell);
      if (!error || !wrapper) {
        shown?.remove();
        wrapper?.classList.remove('jp-Copilot-HasErrorActions');
      } else if (!shown) {
        wrapper.classList.add('jp-Copilot-HasErrorActions');
        wrapper.append(this._buttons(panel, cell));
      }
    }
  }

  private _buttons(panel: NotebookPanel, cell: Cell): HTMLElement {
    const node = document.createElement('div');
    node.className = 'jp-Copilot-ErrorActions';
    const args = { path: panel.context.path, cellId: cell.model.id };
    const fix = styledButton('jp-Copilot-ErrorFix', this._trans.__('Fix'));
    fix.title = this._trans.__(
      'Ask Copilot to fix this error: attaches the cell and its error to a new message. You review any edit before it is applied.'
    );
    fix.addEventListener('click', () => {
      void this._commands.execute(CommandIDs.fixError, args);
    });
    const explain = styledButton(
      'jp-Copilot-ErrorExplain',
      this._trans.__('Explain')
    );
    explain.title = this._trans.__(
      'Ask Copilot to explain this error: attaches the cell and its error to a new message.'
    );
    explain.addEventListener('click', () => {
      void this._commands.execute(CommandIDs.explainError, args);
    });
    node.append(fix, explain);
    return node;
  }

  private _notebooks: INotebookTracker;
  private _commands: JupyterFrontEnd['commands'];
  private _trans: TranslationBundle;
  private _allowed: () => Promise<boolean>;
  private _policy: 'unknown' | 'asking' | 'allows' | 'refuses' = 'unknown';
  private _isDisposed = false;
}

/**
 * The types of the error actions.
 */
export namespace ErrorActions {
  /**
   * The options of the error actions.
   */
  export interface IOptions {
    notebooks: INotebookTracker;
    commands: JupyterFrontEnd['commands'];
    trans: TranslationBundle;
    /**
     * Whether the administrator's policy allows `cell_outputs`; asked once,
     * when the first error shows (an unanswered question counts as yes: the
     * server still refuses what the policy does not allow).
     */
    allowed: () => Promise<boolean>;
  }
}

/**
 * Add the commands behind Fix and Explain: `{path, cellId}` names the cell
 * (else the active cell of the current notebook). They open the Copilot
 * panel, attach the cell and its error as a chip and put a prompt in the
 * composer, unsent; the fix comes back as an edit to review.
 */
export function addErrorCommands(
  app: JupyterFrontEnd,
  panel: CopilotPanel,
  notebooks: INotebookTracker,
  bridge: Bridge,
  trans: TranslationBundle
): void {
  const ask = async (
    kind: 'fix' | 'explain',
    args: Record<string, unknown>
  ): Promise<boolean> => {
    const target = Private.target(notebooks, args);
    const error =
      target &&
      firstError((target.cell.model.toJSON().outputs as unknown[]) ?? []);
    const hash =
      target && sourceHash(target.cell.model.sharedModel.getSource());
    if (!target || !error || !hash) {
      return false;
    }
    if (notebooks.currentWidget !== target.panel) {
      app.shell.activateById(target.panel.id);
    }
    app.shell.activateById(panel.id);
    const chat = await panel.chat();
    const context = (await panel.parts())?.context;
    const artifactId = context && (await Private.untilActive(context));
    if (!chat || !context || !artifactId) {
      return false;
    }
    const budgeted = budgetError(error, bridge.welcome?.budgetBytes ?? 8192);
    context.addReference({
      kind: 'error',
      label: budgeted.ename
        ? trans.__('Cell %1: %2', target.index + 1, budgeted.ename)
        : trans.__('Cell %1: error', target.index + 1),
      artifactId,
      cellId: target.cell.model.id,
      expectedSourceHash: hash,
      ...budgeted
    });
    chat.showCurrent();
    // The prompts Fix and Explain put in the composer, unsent.
    chat.composer.setDraft(
      kind === 'fix'
        ? trans.__('Fix the error in this cell.')
        : trans.__('Explain this error.')
    );
    chat.composer.focusInput();
    return true;
  };
  app.commands.addCommand(CommandIDs.fixError, {
    label: trans.__('Fix Error with Copilot'),
    caption: trans.__(
      'Attach the cell and its error to a new Copilot message that asks for a fix.'
    ),
    execute: args => ask('fix', args)
  });
  app.commands.addCommand(CommandIDs.explainError, {
    label: trans.__('Explain Error with Copilot'),
    caption: trans.__(
      'Attach the cell and its error to a new Copilot message that asks for an explanation.'
    ),
    execute: args => ask('explain', args)
  });
}

namespace Private {
  /**
   * Whether a cell's outputs hold an error.
   */
  export function hasError(cell: Cell): boolean {
    const outputs = (cell.model as import('@jupyterlab/cells').ICodeCellModel)
      .outputs;
    for (let i = 0; i < outputs.length; i++) {
      if (outputs.get(i).type === 'error') {
        return true;
      }
    }
    return false;
  }

  /**
   * The cell the command names, or the active cell of the current notebook.
   */
  export function target(
    notebooks: INotebookTracker,
    args: Record<string, unknown>
  ): { panel: NotebookPanel; cell: Cell; index: number } | null {
    const panel =
      typeof args.path === 'string'
        ? notebooks.find(p => p.context.path === args.path)
        : notebooks.currentWidget;
    if (!panel) {
      return null;
    }
    const cells = panel.content.widgets;
    const index =
      typeof args.cellId === 'string'
        ? cells.findIndex(c => c.model.id === args.cellId)
        : panel.content.activeCellIndex;
    return index >= 0 && cells[index]
      ? { panel, cell: cells[index], index }
      : null;
  }

  /**
   * Refresh the context until it shows an active notebook (3 s at most).
   *
   * @returns Its artifactId, or `null`.
   */
  export async function untilActive(
    context: ContextModel
  ): Promise<string | null> {
    const deadline = Date.now() + 3000;
    return pollUntil(
      async () => {
        await context.refresh();
        const id = context.context?.viewState?.artifactId;
        if (id) {
          return id;
        }
        return Date.now() > deadline || context.isDisposed ? null : undefined;
      },
      { interval: 100 }
    );
  }
}

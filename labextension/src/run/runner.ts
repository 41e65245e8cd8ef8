// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import { JupyterFrontEnd } from '@jupyterlab/application';
import type { ISessionContext } from '@jupyterlab/apputils';
import type { Cell } from '@jupyterlab/cells';
import {
  INotebookTracker,
  Notebook,
  NotebookActions,
  NotebookPanel
} from '@jupyterlab/notebook';
import type { ITranslator } from '@jupyterlab/translation';

import { ActionError } from '../bridge';
import type { RunCellDone } from '../generated/bridge';
import { liveCellReader } from '../livecells';
import { digestOutputs, widgetModelIds } from '../outputdigest';
import { findCell } from '../review/placement';
import { checkRun, type IRunRequest, parseRun, runEnding } from './checks';

/**
 * Answers `jupyter_copilot.notebook.run-cell.invoke` (docs/protocol.md
 * section 11.2). The server sends it only after the person allowed the run
 * card; the page checks its live model once more (the view, the path, the
 * cell, its run mark, its type and its exact source), starts the kernel if
 * the notebook has none, checks again and runs the cell, in the same
 * synchronous step as that last check, as Shift+Enter would: through JupyterLab's own run action, in the
 * notebook's own kernel, so outputs and the execution count land in the
 * notebook. It answers when the run has ended, with digests of the outputs
 * (never raw HTML or base64).
 *
 * A run that has started is never stopped by the page: an abort answers
 * that nothing was withdrawn, and the person can interrupt the kernel.
 */
export class CellRunner {
  constructor(options: CellRunner.IOptions) {
    this._shell = options.shell;
    this._notebooks = options.notebooks;
    this._translator = options.translator;
  }

  /**
   * Check and run one cell; the run's ending once it is over.
   */
  async invoke(data: Record<string, unknown>): Promise<RunCellDone> {
    const request = parseRun(data);
    if (!request) {
      throw new ActionError('invalid-input', 'The run request is malformed.');
    }
    // A request sent again (the server retried): the same run, never a second.
    const running = this._runs.get(request.callId);
    if (running) {
      return running;
    }
    const panel = this._activePanel();
    // Checked at once too, so that a refused run starts no kernel.
    this._check(request, panel);
    const run = this._startAndRun(request, panel);
    this._runs.set(request.callId, run);
    try {
      return await run;
    } finally {
      this._runs.delete(request.callId);
    }
  }

  /**
   * An abort: a run that has started goes on, so nothing is withdrawn.
   */
  async abort(data: Record<string, unknown>): Promise<{ withdrawn: boolean }> {
    if (typeof data.callId !== 'string') {
      throw new ActionError('invalid-input', 'The abort request is malformed.');
    }
    return { withdrawn: false };
  }

  private _activePanel(): NotebookPanel {
    const panel = this._notebooks.currentWidget;
    if (
      !panel ||
      panel !== this._shell.currentWidget ||
      panel.isDisposed ||
      !panel.model
    ) {
      throw new ActionError(
        'not-authoring-view',
        'The active tab is not a notebook editor.'
      );
    }
    return panel;
  }

  /**
   * The page's checks of a run against its live model: the cell to run, or
   * the first refusal thrown.
   */
  private _check(request: IRunRequest, panel: NotebookPanel): Cell {
    const found = findCell(panel, request.cellId);
    const failure = checkRun(
      request,
      // The local path: under real-time collaboration `context.path` carries
      // the collaborative drive's prefix, which the server never reports.
      panel.context.localPath,
      found && {
        cellType: found.model.type,
        metadata: found.model.sharedModel.getMetadata(),
        source: found.model.sharedModel.getSource()
      }
    );
    if (failure) {
      throw new ActionError(failure.code, failure.message);
    }
    // `checkRun` refuses a cell that is not there.
    return found!.cell;
  }

  /**
   * Start the notebook's kernel if it has none, then check the cell again
   * and run it.
   *
   * The check and the run are one synchronous step: `_run` hands the source
   * to the kernel (`CodeCell.execute`, which reads the source and calls the
   * kernel's `requestExecute`) before its first `await`, once a kernel is
   * there. JupyterLab's run action would start a missing kernel itself and
   * read the source only after that wait, so the kernel is started here
   * first: whatever the cell holds when it is there is checked, and only
   * that runs (`stale-source` otherwise).
   */
  private async _startAndRun(
    request: IRunRequest,
    panel: NotebookPanel
  ): Promise<RunCellDone> {
    const context = panel.sessionContext;
    if (!context.session?.kernel) {
      await Private.startKernel(context);
      if (panel.isDisposed || !panel.model) {
        throw new ActionError(
          'not-authoring-view',
          'The notebook was closed before its kernel started.'
        );
      }
      if (!context.session?.kernel) {
        // No kernel could be started (none chosen, or it failed): nothing ran.
        return { executionCount: null, status: 'aborted', outputs: [] };
      }
    }
    const cell = this._check(request, panel);
    return this._run(panel, cell);
  }

  private async _run(panel: NotebookPanel, cell: Cell): Promise<RunCellDone> {
    let executed: { success: boolean; error?: unknown } | null = null;
    const onExecuted = (
      _: unknown,
      args: {
        notebook: Notebook;
        cell: Cell;
        success: boolean;
        error?: unknown;
      }
    ) => {
      if (args.cell === cell) {
        executed = { success: args.success, error: args.error };
      }
    };
    NotebookActions.executed.connect(onExecuted);
    try {
      // Nothing is awaited before this call, and with a kernel present the
      // run action reaches the kernel before its own first wait.
      await NotebookActions.runCells(
        panel.content,
        [cell],
        panel.sessionContext,
        undefined,
        this._translator
      );
    } catch {
      // JupyterLab reports a failed run through `executed` too; without it
      // the run counts as aborted.
    } finally {
      NotebookActions.executed.disconnect(onExecuted);
    }
    return {
      executionCount: cell.isDisposed
        ? null
        : ((cell.model as { executionCount?: number | null }).executionCount ??
          null),
      status: runEnding(executed),
      outputs: cell.isDisposed ? [] : await Private.digests(panel, cell)
    };
  }

  private _shell: JupyterFrontEnd.IShell;
  private _notebooks: INotebookTracker;
  private _translator: ITranslator | undefined;
  private _runs = new Map<string, Promise<RunCellDone>>();
}

/**
 * The types of the cell runner.
 */
export namespace CellRunner {
  export interface IOptions {
    shell: JupyterFrontEnd.IShell;
    notebooks: INotebookTracker;
    /** JupyterLab's translator, for the run action's own messages. */
    translator?: ITranslator;
  }
}

namespace Private {
  /**
   * Start the session's kernel when it has none, as JupyterLab's run action
   * would, but without a kernel picker: an agent's run never opens a dialog.
   */
  export async function startKernel(context: ISessionContext): Promise<void> {
    await context.ready;
    if (!context.session?.kernel && context.hasNoKernel) {
      await context.startKernel();
    }
  }

  /**
   * The digests of a cell's outputs, as read-cells reports them.
   */
  export async function digests(
    panel: NotebookPanel,
    cell: Cell
  ): Promise<Record<string, unknown>[]> {
    const reader = liveCellReader(panel);
    const index = reader?.indexOf(cell.model.id) ?? -1;
    if (!reader || index < 0) {
      return [];
    }
    const outputs = reader.cell(index).outputs();
    const widgetTypes = new Map<string, string | null>();
    for (const id of widgetModelIds(outputs)) {
      widgetTypes.set(id, await reader.widgetType(id));
    }
    return digestOutputs(outputs, widgetTypes) as unknown as Record<
      string,
      unknown
    >[];
  }
}

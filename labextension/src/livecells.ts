// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import type { CodeCell, ICellModel, ICodeCellModel } from '@jupyterlab/cells';
import type { NotebookPanel } from '@jupyterlab/notebook';
import type { Widget } from '@lumino/widgets';

import { savedWidgetType, WIDGET_VIEW_MIME } from './outputdigest';
import { ICellReader } from './readcells';

/**
 * A cell reader over the live in-memory model of a notebook panel, unsaved
 * edits included, for the read-cells action.
 *
 * A widget's type comes from the live ipywidgets manager when one is
 * reachable through a rendered widget view, else from the widget state saved
 * in the notebook's metadata, else it is unknown. ipywidgets is optional:
 * every step is guarded and bounded in time.
 *
 * @param panel - The active notebook panel, or `null`.
 * @returns The reader, or `null` when there is no live notebook.
 */
export function liveCellReader(
  panel: NotebookPanel | null
): ICellReader | null {
  const model = panel?.model;
  if (!panel || !model || panel.isDisposed) {
    return null;
  }
  const cells = model.cells;
  let manager: Promise<Private.IWidgetManager | null> | null = null;
  return {
    // The local path: under real-time collaboration `context.path` carries
    // the collaborative drive's prefix, which the server never reports.
    path: panel.context.localPath,
    cellCount: cells.length,
    indexOf: cellId => {
      for (let i = 0; i < cells.length; i++) {
        if (cells.get(i).id === cellId) {
          return i;
        }
      }
      return -1;
    },
    cell: index => {
      const cell = cells.get(index);
      return {
        cellId: cell.id,
        cellType: cell.type,
        source: cell.sharedModel.getSource(),
        outputs: () => Private.outputs(cell)
      };
    },
    widgetType: async modelId => {
      // One search for the manager per read: every view of a notebook has
      // the same kernel's manager.
      manager ??= Private.findManager(panel);
      const live = await Private.liveWidgetType(await manager, modelId);
      return live ?? savedWidgetType(model.getMetadata('widgets'), modelId);
    }
  };
}

namespace Private {
  /**
   * How long one step of a widget type lookup may take, in milliseconds.
   */
  export const LOOKUP_TIMEOUT = 200;

  /**
   * The part of an ipywidgets manager the lookup uses.
   */
  export interface IWidgetManager {
    get_model(modelId: string): unknown;
  }

  /**
   * The outputs of a code cell as nbformat JSON; none for other cells.
   */
  export function outputs(cell: ICellModel): readonly unknown[] {
    return cell.type === 'code'
      ? (cell as ICodeCellModel).outputs.toJSON()
      : [];
  }

  /**
   * The ipywidgets manager behind the first rendered widget view of a
   * notebook, or `null`. ipywidgets 8 keeps it in the renderer's private
   * `_manager` promise (its `manager` is a setter only); older versions kept
   * the manager itself there or in `manager`.
   */
  export async function findManager(
    panel: NotebookPanel
  ): Promise<IWidgetManager | null> {
    for (const cell of panel.content.widgets) {
      if (cell.model.type !== 'code') {
        continue;
      }
      // Undefined until the cell is first rendered in a windowed notebook.
      const area = (cell as CodeCell).outputArea as Widget | undefined;
      for (const renderer of widgetRenderers(area, 3)) {
        const r = renderer as unknown as {
          manager?: unknown;
          _manager?: unknown;
        };
        for (const candidate of [r.manager, r._manager]) {
          if (isManager(candidate)) {
            return candidate;
          }
          const promise = (
            candidate as { promise?: PromiseLike<unknown> } | null | undefined
          )?.promise;
          if (typeof promise?.then === 'function') {
            const found = await within(
              Promise.resolve(promise),
              LOOKUP_TIMEOUT
            );
            if (isManager(found)) {
              return found;
            }
          }
        }
      }
    }
    return null;
  }

  /**
   * The `_model_name` of a model in a live manager, or `null`.
   */
  export async function liveWidgetType(
    manager: IWidgetManager | null,
    modelId: string
  ): Promise<string | null> {
    if (!manager) {
      return null;
    }
    try {
      const model = (await within(
        Promise.resolve().then(() => manager.get_model(modelId)),
        LOOKUP_TIMEOUT
      )) as { get?: unknown } | null;
      const name =
        typeof model?.get === 'function' ? model.get('_model_name') : null;
      return typeof name === 'string' && name ? name : null;
    } catch {
      return null;
    }
  }

  /**
   * The widget view renderers among a widget's descendants, down to a depth.
   */
  function* widgetRenderers(
    widget: Widget | undefined,
    depth: number
  ): Generator<Widget> {
    if (!widget || depth < 0) {
      return;
    }
    for (const child of widget.children()) {
      if ((child as { mimeType?: unknown }).mimeType === WIDGET_VIEW_MIME) {
        yield child;
      } else {
        yield* widgetRenderers(child, depth - 1);
      }
    }
  }

  /**
   * Whether a value looks like a widget manager.
   */
  function isManager(value: unknown): value is IWidgetManager {
    return (
      typeof (value as IWidgetManager | null | undefined)?.get_model ===
      'function'
    );
  }

  /**
   * A promise's value, or `null` when it rejects or takes longer than `ms`.
   */
  function within<T>(promise: Promise<T>, ms: number): Promise<T | null> {
    let timer = 0;
    const timeout = new Promise<null>(resolve => {
      timer = window.setTimeout(() => resolve(null), ms);
    });
    return Promise.race([promise.catch(() => null), timeout]).finally(() =>
      window.clearTimeout(timer)
    );
  }
}

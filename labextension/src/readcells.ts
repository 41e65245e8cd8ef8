// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

/**
 * The pure part of the read-cells action: reading its request and taking
 * one page of cells within the request's limits, outputs digested.
 *
 * This module imports only other pure modules, so that node can load the
 * compiled file directly in tests. The live notebook is reached through an
 * {@link ICellReader}; `livecells.ts` makes one from a notebook panel.
 */

import { utf8Length } from './hash.js';
import {
  digestOutputs,
  IOutputImage,
  OutputDigest,
  outputImages,
  widgetModelIds
} from './outputdigest.js';
import { ActionError } from './protocol.js';

/**
 * The request data of `jupyter_copilot.notebook.read-cells`.
 */
export interface IReadCellsRequest {
  path: string;
  /** The first cell to read; `null` reads from the first cell. */
  startCellId: string | null;
  /** At least 1. */
  maxCells: number;
  /** The byte total after which no further cell is taken. */
  maxBytes: number;
  includeOutputs: boolean;
  /**
   * Whether code cells list their PNG and JPEG outputs (`images`), for an
   * attached cell whose plots go to an agent.
   */
  includeImages: boolean;
  /** The most base64 characters of images sent in all. */
  maxImageChars: number;
}

/**
 * One cell of the result; `outputs` only for code cells when asked for.
 */
export interface ICellEntry {
  cellId: string;
  cellType: string;
  source: string;
  outputs?: OutputDigest[];
  /** Not counted in the byte total: the server never serves them as text. */
  images?: IOutputImage[];
}

/**
 * The result data of read-cells.
 */
export interface IReadCellsResult {
  path: string;
  cellCount: number;
  startIndex: number;
  cells: ICellEntry[];
  /** The id of the cell after the last one taken; `null` after the last cell. */
  nextCellId: string | null;
}

/**
 * A notebook as read-cells sees it.
 */
export interface ICellReader {
  /** The notebook's path, as the page state reports it. */
  readonly path: string;
  /** The number of cells. */
  readonly cellCount: number;
  /** The index of the cell with an id, or -1. */
  indexOf(cellId: string): number;
  /** The cell at an index; its outputs are read only when asked for. */
  cell(index: number): {
    cellId: string;
    cellType: string;
    source: string;
    outputs(): readonly unknown[];
  };
  /** The `_model_name` of a widget model, or `null` when unknown. */
  widgetType(modelId: string): string | null | Promise<string | null>;
}

/**
 * Read a request's data; `null` when a field is missing or of the wrong
 * type (the server validated it already, so this is a defence only).
 */
export function parseReadCells(
  data: Record<string, unknown>
): IReadCellsRequest | null {
  const {
    path,
    startCellId,
    maxCells,
    maxBytes,
    includeOutputs,
    includeImages,
    maxImageChars
  } = data;
  if (
    typeof path !== 'string' ||
    !(
      startCellId === undefined ||
      startCellId === null ||
      typeof startCellId === 'string'
    ) ||
    !(Number.isInteger(maxCells) && (maxCells as number) >= 1) ||
    !(Number.isInteger(maxBytes) && (maxBytes as number) >= 0) ||
    !(includeOutputs === undefined || typeof includeOutputs === 'boolean') ||
    !(includeImages === undefined || typeof includeImages === 'boolean') ||
    !(
      maxImageChars === undefined ||
      (Number.isInteger(maxImageChars) && (maxImageChars as number) >= 0)
    )
  ) {
    return null;
  }
  return {
    path,
    startCellId: startCellId ?? null,
    maxCells: maxCells as number,
    maxBytes: maxBytes as number,
    includeOutputs: includeOutputs ?? false,
    includeImages: includeImages ?? false,
    maxImageChars: (maxImageChars as number | undefined) ?? 0
  };
}

/**
 * Answer a read-cells request from a notebook.
 *
 * Cells are taken in order from the start cell until `maxCells` are taken
 * or the running total of {@link cellBytes} has reached `maxBytes`; at least
 * one cell is taken whenever one remains. `nextCellId` names the cell the
 * next page starts with.
 *
 * @param notebook - The active notebook, `null` when there is none.
 * @param data - The request data.
 * @throws ActionError `invalid-input`, `not-authoring-view`,
 *   `artifact-mismatch` or `cell-not-found`, checked in that order.
 */
export async function readCells(
  notebook: ICellReader | null,
  data: Record<string, unknown>
): Promise<IReadCellsResult> {
  const request = parseReadCells(data);
  if (!request) {
    throw new ActionError('invalid-input', 'The read request is malformed.');
  }
  if (!notebook) {
    throw new ActionError(
      'not-authoring-view',
      'The active tab is not a notebook editor.'
    );
  }
  if (notebook.path !== request.path) {
    throw new ActionError('artifact-mismatch');
  }
  const startIndex =
    request.startCellId === null ? 0 : notebook.indexOf(request.startCellId);
  if (startIndex < 0) {
    throw new ActionError('cell-not-found');
  }
  const cellCount = notebook.cellCount;
  const widgetTypes = new Map<string, string | null>();
  const cells: ICellEntry[] = [];
  let total = 0;
  for (
    let i = startIndex;
    i < cellCount && cells.length < request.maxCells;
    i++
  ) {
    const cell = notebook.cell(i);
    const entry: ICellEntry = {
      cellId: cell.cellId,
      cellType: cell.cellType,
      source: cell.source
    };
    if (request.includeOutputs && cell.cellType === 'code') {
      const outputs = cell.outputs();
      for (const id of widgetModelIds(outputs)) {
        if (!widgetTypes.has(id)) {
          widgetTypes.set(id, await notebook.widgetType(id));
        }
      }
      entry.outputs = digestOutputs(outputs, widgetTypes);
    }
    if (request.includeImages && cell.cellType === 'code') {
      entry.images = outputImages(cell.outputs(), request.maxImageChars);
    }
    cells.push(entry);
    total += cellBytes(entry);
    if (total >= request.maxBytes) {
      break;
    }
  }
  const next = startIndex + cells.length;
  const nextCellId = next < cellCount ? notebook.cell(next).cellId : null;
  return { path: notebook.path, cellCount, startIndex, cells, nextCellId };
}

/**
 * The bytes a cell adds to a page's running total: the UTF-8 bytes of its
 * source, plus those of its outputs' digest as compact JSON when present.
 */
export function cellBytes(entry: ICellEntry): number {
  const outputs = entry.outputs ? utf8Length(JSON.stringify(entry.outputs)) : 0;
  return utf8Length(entry.source) + outputs;
}

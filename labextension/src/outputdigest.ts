// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

/**
 * The digest of notebook outputs that read-cells reports: text for plain
 * text and markdown, type and model id for an ipywidgets view, and only a
 * byte size for anything else (base64 payloads and HTML never travel).
 *
 * This module imports only other pure modules, so that node can load the
 * compiled file directly in tests.
 */

import { utf8Length } from './hash.js';

/**
 * The MIME type of an ipywidgets view in an output.
 */
export const WIDGET_VIEW_MIME = 'application/vnd.jupyter.widget-view+json';

/**
 * One MIME type of an output bundle, digested: text for plain text and
 * markdown, type and model id for a widget view, a byte size otherwise.
 */
export type MimeItem =
  | { text: string }
  | { modelId: string; widgetType: string | null }
  | { bytes: number };

/**
 * The digest of one output.
 */
export type OutputDigest =
  | { outputType: 'stream'; name: string; text: string }
  | {
      outputType: 'execute_result';
      executionCount: number | null;
      data: Record<string, MimeItem>;
    }
  | { outputType: 'display_data'; data: Record<string, MimeItem> }
  | { outputType: 'error'; ename: string; evalue: string };

/**
 * The digests of nbformat outputs; outputs of an unknown type are left out.
 *
 * @param outputs - The outputs, as nbformat JSON.
 * @param widgetTypes - The widget types found, by model id.
 */
export function digestOutputs(
  outputs: readonly unknown[],
  widgetTypes: ReadonlyMap<string, string | null>
): OutputDigest[] {
  const digests: OutputDigest[] = [];
  for (const output of outputs) {
    const digest = digestOutput(output, widgetTypes);
    if (digest) {
      digests.push(digest);
    }
  }
  return digests;
}

/**
 * The digest of one nbformat output; `null` for an unknown output type.
 *
 * @param output - The output, as nbformat JSON.
 * @param widgetTypes - The widget types found, by model id.
 */
export function digestOutput(
  output: unknown,
  widgetTypes: ReadonlyMap<string, string | null>
): OutputDigest | null {
  if (!Private.isObject(output)) {
    return null;
  }
  switch (output.output_type) {
    case 'stream':
      return {
        outputType: 'stream',
        name: Private.string(output.name),
        text: Private.multiline(output.text)
      };
    case 'execute_result':
      return {
        outputType: 'execute_result',
        executionCount: Number.isInteger(output.execution_count)
          ? (output.execution_count as number)
          : null,
        data: digestBundle(output.data, widgetTypes)
      };
    case 'display_data':
      return {
        outputType: 'display_data',
        data: digestBundle(output.data, widgetTypes)
      };
    case 'error':
      return {
        outputType: 'error',
        ename: Private.string(output.ename),
        evalue: Private.string(output.evalue)
      };
    default:
      return null;
  }
}

/**
 * The digest of a MIME bundle (`data` of an output).
 */
export function digestBundle(
  bundle: unknown,
  widgetTypes: ReadonlyMap<string, string | null>
): Record<string, MimeItem> {
  const items: Record<string, MimeItem> = {};
  if (Private.isObject(bundle)) {
    for (const [mime, value] of Object.entries(bundle)) {
      items[mime] = mimeItem(mime, value, widgetTypes);
    }
  }
  return items;
}

/**
 * The digest of one MIME type's payload.
 *
 * @param mime - The MIME type.
 * @param value - Its payload, as nbformat JSON.
 * @param widgetTypes - The widget types found, by model id.
 */
export function mimeItem(
  mime: string,
  value: unknown,
  widgetTypes: ReadonlyMap<string, string | null>
): MimeItem {
  if (mime === 'text/plain' || mime === 'text/markdown') {
    return { text: Private.multiline(value) };
  }
  const modelId = Private.widgetModelId(mime, value);
  if (modelId !== null) {
    return { modelId, widgetType: widgetTypes.get(modelId) ?? null };
  }
  return { bytes: payloadBytes(mime, value) };
}

/**
 * The size of a payload that is not shown: the decoded size of a base64
 * binary payload, else the UTF-8 size of the string (of its JSON when it is
 * not a string; a list of strings is an nbformat multiline string).
 */
export function payloadBytes(mime: string, value: unknown): number {
  let text: string;
  if (typeof value === 'string') {
    text = value;
  } else if (!Private.isJsonMime(mime) && Private.isStringList(value)) {
    text = value.join('');
  } else {
    text = JSON.stringify(value) ?? '';
  }
  if (Private.isBinaryMime(mime)) {
    const decoded = base64DecodedSize(text);
    if (decoded !== null) {
      return decoded;
    }
  }
  return utf8Length(text);
}

/**
 * The number of bytes a base64 string decodes to, padded or not, with line
 * breaks and other whitespace ignored; `null` when it is not base64.
 */
export function base64DecodedSize(text: string): number | null {
  const s = /\s/.test(text) ? text.replace(/\s+/g, '') : text;
  if (!Private.BASE64.test(s) || s.length % 4 === 1) {
    return null;
  }
  const padding = s.endsWith('==') ? 2 : s.endsWith('=') ? 1 : 0;
  return Math.floor(((s.length - padding) * 3) / 4);
}

/**
 * The MIME types of outputs that may go to an agent as images.
 */
export const IMAGE_MIMES: readonly string[] = ['image/png', 'image/jpeg'];

/**
 * One PNG or JPEG output of a cell, for an agent that takes images: its
 * base64 `data` while the cell's images fit the page's limit, only its
 * decoded size past it; `alt` is the output's own `text/plain`.
 */
export interface IOutputImage {
  mime: string;
  bytes: number;
  alt: string;
  data?: string;
}

/**
 * The PNG and JPEG images among a cell's outputs, in order.
 *
 * @param outputs - The outputs, as nbformat JSON.
 * @param maxChars - The most base64 characters sent in all; images past it
 *   carry no `data`.
 */
export function outputImages(
  outputs: readonly unknown[],
  maxChars: number
): IOutputImage[] {
  const images: IOutputImage[] = [];
  let sent = 0;
  for (const output of outputs) {
    if (!Private.isObject(output) || !Private.isObject(output.data)) {
      continue;
    }
    const bundle = output.data;
    for (const mime of IMAGE_MIMES) {
      const value = bundle[mime];
      const text =
        typeof value === 'string'
          ? value
          : Private.isStringList(value)
            ? value.join('')
            : null;
      if (text === null) {
        continue;
      }
      const data = text.replace(/\s+/g, '');
      const image: IOutputImage = {
        mime,
        bytes: payloadBytes(mime, data),
        alt: Private.multiline(bundle['text/plain'])
      };
      if (sent + data.length <= maxChars) {
        image.data = data;
        sent += data.length;
      }
      images.push(image);
    }
  }
  return images;
}

/**
 * The widget model ids of the widget views among some outputs, in order.
 */
export function widgetModelIds(outputs: readonly unknown[]): string[] {
  const ids: string[] = [];
  for (const output of outputs) {
    if (Private.isObject(output) && Private.isObject(output.data)) {
      const id = Private.widgetModelId(
        WIDGET_VIEW_MIME,
        output.data[WIDGET_VIEW_MIME]
      );
      if (id !== null) {
        ids.push(id);
      }
    }
  }
  return ids;
}

/**
 * The `model_name` a notebook's saved widget state gives a model, or `null`.
 *
 * @param widgets - The notebook's `metadata.widgets`, as it is.
 * @param modelId - The widget model id.
 */
export function savedWidgetType(
  widgets: unknown,
  modelId: string
): string | null {
  const saved = Private.isObject(widgets)
    ? widgets[Private.WIDGET_STATE_MIME]
    : null;
  const state = Private.isObject(saved) ? saved.state : null;
  const own =
    Private.isObject(state) &&
    Object.prototype.hasOwnProperty.call(state, modelId);
  const model = own ? (state as Record<string, unknown>)[modelId] : null;
  const name = Private.isObject(model) ? model.model_name : null;
  return typeof name === 'string' && name ? name : null;
}

namespace Private {
  /**
   * The MIME type of the widget state saved in notebook metadata.
   */
  export const WIDGET_STATE_MIME = 'application/vnd.jupyter.widget-state+json';

  /**
   * Base64 without whitespace, with optional padding.
   */
  export const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

  /**
   * Whether a value is a plain JSON object.
   */
  export function isObject(value: unknown): value is Record<string, unknown> {
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  }

  /**
   * Whether a value is a list of strings.
   */
  export function isStringList(value: unknown): value is string[] {
    return (
      Array.isArray(value) && value.every(item => typeof item === 'string')
    );
  }

  /**
   * A string field, or "".
   */
  export function string(value: unknown): string {
    return typeof value === 'string' ? value : '';
  }

  /**
   * An nbformat multiline string (a string or a list of strings) as one
   * string; "" for anything else.
   */
  export function multiline(value: unknown): string {
    return isStringList(value) ? value.join('') : string(value);
  }

  /**
   * The model id of a widget view payload, or `null`.
   */
  export function widgetModelId(mime: string, value: unknown): string | null {
    return mime === WIDGET_VIEW_MIME &&
      isObject(value) &&
      typeof value.model_id === 'string'
      ? value.model_id
      : null;
  }

  /**
   * Whether nbformat stores a MIME type's payload as JSON.
   */
  export function isJsonMime(mime: string): boolean {
    return mime === 'application/json' || mime.endsWith('+json');
  }

  /**
   * Whether nbformat stores a MIME type's payload as base64.
   */
  export function isBinaryMime(mime: string): boolean {
    return (
      (mime.startsWith('image/') && mime !== 'image/svg+xml') ||
      mime.startsWith('audio/') ||
      mime.startsWith('video/') ||
      mime === 'application/pdf' ||
      mime === 'application/octet-stream'
    );
  }
}

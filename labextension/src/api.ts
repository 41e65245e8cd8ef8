// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

/**
 * The action names of contract section 1.
 */
export namespace Actions {
  export const getContext = 'jupyter_copilot.notebook.get-context';
  export const editCellInvoke = 'jupyter_copilot.notebook.edit-cell.invoke';
  export const editCellAbort = 'jupyter_copilot.notebook.edit-cell.abort';
  export const readCells = 'jupyter_copilot.notebook.read-cells';
}

/**
 * Where an action of a page or tool is handled.
 */
export interface IActionRef {
  action: string;
  extensionName: string;
  iframeType: string;
}

/**
 * A page manifest (contract section 2).
 */
export interface IPageManifest {
  name: string;
  pageType: string;
  description: string;
  featureSwitch: string;
  /** A regular expression source applied to the page path. */
  match: string;
  getContext: IActionRef;
}

/**
 * A tool definition (contract section 2).
 */
export interface IToolDefinition {
  name: string;
  description: string;
  featureSwitch: string;
  copilotPages: string[];
  parameters: Record<string, unknown>;
  invoke: IActionRef;
  abort?: IActionRef;
}

/**
 * The reply of `GET copilot/api/manifest`; both lists are empty when the
 * feature switch is off.
 */
export interface IManifest {
  pages: IPageManifest[];
  tools: IToolDefinition[];
}

/**
 * The reply of `GET copilot/api/status` (contract section 3).
 */
export interface IStatus {
  version: string;
  enabled: boolean;
  toolsEnabled: boolean;
  killSwitch: { engaged: boolean; source: 'config' | 'file' | null };
  pages: number;
  rtc: boolean;
}

/**
 * A refusal (contract section 7).
 */
export interface IRefusal {
  code: string;
  message: string;
}

/**
 * The outcome of an action: a result or a refusal, never both.
 */
export type ActionOutcome<T> =
  | { result: T; error?: undefined }
  | { result?: undefined; error: IRefusal };

/**
 * The body of `POST copilot/api/actions/<action>`.
 */
export interface IActionBody {
  data: Record<string, unknown>;
  pageId?: string;
  callId?: string;
}

/**
 * Why a selected cell's source was left out of its context entry.
 */
export interface IOmitted {
  reason: 'over-budget' | 'unencodable';
  sourceBytes: number | null;
  budgetBytes?: number;
}

/**
 * The value of the `notebook_view_state` entry.
 */
export interface IViewStateValue {
  artifactId: string;
  viewType: string;
  permissionMode: 'edit' | 'read-only';
  selectedCellCount: number;
  kernelLanguage: string | null;
}

/**
 * The value of the `notebook_selected_cell` entry.
 */
export interface ISelectedCellValue {
  artifactId: string;
  cellId: string;
  cellType: 'code' | 'markdown' | 'raw';
  language: string | null;
  source?: string;
  expectedSourceHash?: string;
}

/**
 * A context entry of get-context (contract section 4.1).
 */
export interface IContextEntry<T = unknown> {
  name: string;
  description: string;
  value: T;
  reference?: { label: string; icon: string };
  omitted?: IOmitted;
}

/**
 * The result of get-context.
 */
export interface IGetContextResult {
  customContext: IContextEntry[];
}

/**
 * Fetch the page and tool registry.
 *
 * @param settings - The server settings; the defaults when omitted.
 * @throws ServerConnection.ResponseError when the server extension is absent.
 */
export async function getManifest(
  settings?: ServerConnection.ISettings
): Promise<IManifest> {
  return Private.requestJSON<IManifest>('manifest', { method: 'GET' }, settings);
}

/**
 * Fetch the server status.
 *
 * @param settings - The server settings; the defaults when omitted.
 */
export async function getStatus(
  settings?: ServerConnection.ISettings
): Promise<IStatus> {
  return Private.requestJSON<IStatus>('status', { method: 'GET' }, settings);
}

/**
 * Run an action through the server's dispatcher.
 *
 * A refusal (any reply that carries `{error: {code, message}}`, whatever its
 * HTTP status) is returned, not thrown.
 *
 * @param action - The action name.
 * @param body - The action data and optional page and call ids.
 * @param settings - The server settings; the defaults when omitted.
 * @throws ServerConnection.NetworkError when the server cannot be reached,
 *   and ServerConnection.ResponseError for a reply that is not an outcome.
 */
export async function postAction<T = unknown>(
  action: string,
  body: IActionBody,
  settings?: ServerConnection.ISettings
): Promise<ActionOutcome<T>> {
  const s = settings ?? ServerConnection.makeSettings();
  const url = URLExt.join(
    s.baseUrl,
    'copilot/api/actions',
    encodeURIComponent(action)
  );
  const response = await ServerConnection.makeRequest(
    url,
    { method: 'POST', body: JSON.stringify(body) },
    s
  );
  const reply = await Private.readJSON(response);
  if (Private.isOutcome(reply)) {
    return reply as ActionOutcome<T>;
  }
  throw new ServerConnection.ResponseError(response);
}

/**
 * The person's decision on an approval request: allow once or deny, or
 * (for an agent's own permission request) one of the options it offered.
 */
export type ApprovalDecision = 'allow' | 'deny' | { optionId: string };

/**
 * The reply to a decision the server accepted.
 */
export interface IApprovalDecided {
  requestId: string;
  /** `allowed` or `denied` for an edit request; what the server said otherwise. */
  outcome: string;
}

/**
 * Decide an approval request: `POST copilot/api/approvals/<requestId>` with
 * `{"decision"}` or `{"optionId"}`.
 *
 * A refusal (`denied` when another user decides, `aborted` when the request
 * is unknown or already ended, `invalid-input`) is returned, not thrown.
 *
 * @param requestId - The request, as the `approval` message gave it.
 * @param decision - Allow once, deny, or a permission option.
 * @param settings - The server settings; the defaults when omitted.
 * @throws ServerConnection.NetworkError when the server cannot be reached,
 *   and ServerConnection.ResponseError for a reply that is neither.
 */
export async function postApprovalDecision(
  requestId: string,
  decision: ApprovalDecision,
  settings?: ServerConnection.ISettings
): Promise<ActionOutcome<IApprovalDecided>> {
  const body = typeof decision === 'string' ? { decision } : { optionId: decision.optionId };
  const reply = await Private.postDecision('approvals', requestId, body, settings);
  if (reply.error) {
    return reply;
  }
  const outcome = typeof reply.result.outcome === 'string' ? reply.result.outcome : '';
  return { result: { requestId, outcome } };
}

/**
 * The person's decision on a file review: write the proposal, or drop it.
 */
export type FileReviewDecision = 'keep' | 'undo';

/**
 * Decide a file review: `POST copilot/api/file-reviews/<reviewId>` with
 * `{"decision"}`. The server writes the file on `keep`, only if it still
 * holds the text the proposal was made against.
 *
 * A refusal (`stale-source`, `kill-switch`, `read-only`, `aborted` when the review is
 * already decided or withdrawn, `outside-root`, `denied`) is returned, not
 * thrown.
 *
 * @param reviewId - The review, as the `file-review` message gave it.
 * @param decision - Keep or undo.
 * @param settings - The server settings; the defaults when omitted.
 * @throws ServerConnection.NetworkError when the server cannot be reached,
 *   and ServerConnection.ResponseError for a reply that is neither.
 */
export async function postFileReviewDecision(
  reviewId: string,
  decision: FileReviewDecision,
  settings?: ServerConnection.ISettings
): Promise<ActionOutcome<{ decision: FileReviewDecision }>> {
  const reply = await Private.postDecision('file-reviews', reviewId, { decision }, settings);
  return reply.error ? reply : { result: { decision } };
}

namespace Private {
  /**
   * POST a decision to `copilot/api/<collection>/<id>`: the reply's fields
   * when accepted, the refusal when it carries one.
   *
   * @throws ServerConnection.ResponseError for a reply that is neither.
   */
  export async function postDecision(
    collection: string,
    id: string,
    body: Record<string, unknown>,
    settings?: ServerConnection.ISettings
  ): Promise<ActionOutcome<Record<string, unknown>>> {
    const s = settings ?? ServerConnection.makeSettings();
    const url = URLExt.join(s.baseUrl, 'copilot/api', collection, encodeURIComponent(id));
    const response = await ServerConnection.makeRequest(
      url,
      { method: 'POST', body: JSON.stringify(body) },
      s
    );
    const reply = (await readJSON(response)) as Record<string, unknown> | null;
    if (response.ok) {
      return { result: typeof reply === 'object' && reply ? reply : {} };
    }
    const error = reply?.error as { code?: unknown; message?: unknown } | undefined;
    if (typeof error?.code === 'string') {
      return { error: { code: error.code, message: String(error.message ?? '') } };
    }
    throw new ServerConnection.ResponseError(response);
  }

  /**
   * GET or POST a path under `copilot/api/` and parse a 200 reply.
   */
  export async function requestJSON<T>(
    path: string,
    init: RequestInit,
    settings?: ServerConnection.ISettings
  ): Promise<T> {
    const s = settings ?? ServerConnection.makeSettings();
    const url = URLExt.join(s.baseUrl, 'copilot/api', path);
    const response = await ServerConnection.makeRequest(url, init, s);
    if (!response.ok) {
      throw new ServerConnection.ResponseError(response);
    }
    return (await readJSON(response)) as T;
  }

  /**
   * The parsed body of a reply, or `null` when it is not JSON.
   */
  export async function readJSON(response: Response): Promise<unknown> {
    const text = await response.text();
    try {
      return text ? JSON.parse(text) : null;
    } catch {
      return null;
    }
  }

  /**
   * Whether a parsed reply is `{result}` or `{error: {code, message}}`.
   */
  export function isOutcome(reply: unknown): boolean {
    if (typeof reply !== 'object' || reply === null) {
      return false;
    }
    const r = reply as { result?: unknown; error?: { code?: unknown } };
    if ('result' in r) {
      return true;
    }
    return typeof r.error === 'object' && typeof r.error?.code === 'string';
  }
}

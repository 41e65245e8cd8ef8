// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import { ServerConnection } from '@jupyterlab/services';

import { REFUSAL_TEXT } from '../protocol';
import { ChatApiError } from './api';

/**
 * The words of the chat for what went wrong. They never name a model, a
 * runtime or a path.
 */
export namespace ChatTexts {
  /**
   * Said when a running reply's stream broke off and its outcome cannot be read.
   */
  export const LOST = 'The connection to the Copilot server was lost before the reply ended.';

  /**
   * Why a request of the chat failed, for a person.
   *
   * @param error - What the API call threw.
   */
  export function failure(error: unknown): string {
    if (error instanceof ServerConnection.NetworkError) {
      return 'The Copilot server cannot be reached. Try again.';
    }
    if (!(error instanceof ChatApiError)) {
      return 'Something went wrong. Try again.';
    }
    switch (error.code) {
      case 'conversation-busy':
        return 'A reply is still running. Wait for it, or press Stop.';
      case 'stale-source':
        return 'The attached cell changed after it was attached. Attach it again and resend.';
      case 'cell-not-found':
        return 'The attached cell is gone. Attach another cell, or send without one.';
      case 'unknown-conversation':
        return 'This conversation no longer exists on the server. Start a new conversation.';
      case 'feature-disabled':
        return REFUSAL_TEXT['feature-disabled'];
      default:
        return error.message || 'The Copilot server refused the request.';
    }
  }
}

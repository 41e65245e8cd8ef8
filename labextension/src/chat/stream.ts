// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import { NdjsonSplitter, parseLine } from './ndjson';
import { parseEvent, StreamEvent } from './transcript';

/**
 * Read the NDJSON body of a message's response as it arrives, handing each
 * event on at once.
 *
 * @param response - The accepted response of `POST .../messages`.
 * @param onEvent - Called with each well-formed event, in order.
 * @returns Whether the stream ended with its `end` event; `false` when the
 *   connection closed before it (the turn may still be running).
 * @throws When reading fails, e.g. after the request was aborted.
 */
export async function readStream(
  response: Response,
  onEvent: (event: StreamEvent) => void
): Promise<boolean> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  const splitter = new NdjsonSplitter();
  let ended = false;
  const handle = (lines: string[]) => {
    for (const line of lines) {
      const event = parseEvent(parseLine(line));
      if (event) {
        ended ||= event.type === 'end';
        onEvent(event);
      }
    }
  };
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        break;
      }
      handle(splitter.push(decoder.decode(value, { stream: true })));
    }
    handle(splitter.push(decoder.decode()));
    handle(splitter.flush());
  } finally {
    reader.releaseLock();
  }
  return ended;
}

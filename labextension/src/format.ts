// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import type { TranslationBundle } from '@jupyterlab/translation';

/**
 * A byte size for a person: "1 byte", "512 bytes", "8 KB", "120.4 KB", "1.5 MB".
 *
 * @param n - A number of bytes.
 * @param trans - The words of the panel, in the person's language.
 */
export function formatBytes(n: number, trans: TranslationBundle): string {
  if (n < 1024) {
    return trans._n('%1 byte', '%1 bytes', n);
  }
  const kb = n < 1024 * 1024;
  const value = Number((kb ? n / 1024 : n / (1024 * 1024)).toFixed(1));
  return kb ? trans.__('%1 KB', value) : trans.__('%1 MB', value);
}

// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

/**
 * A byte size for a person: "1 byte", "512 bytes", "8 KB", "120.4 KB", "1.5 MB".
 *
 * @param n - A number of bytes.
 */
export function formatBytes(n: number): string {
  if (n < 1024) {
    return n === 1 ? '1 byte' : `${n} bytes`;
  }
  const [value, unit] =
    n < 1024 * 1024 ? [n / 1024, 'KB'] : [n / (1024 * 1024), 'MB'];
  return `${Number(value.toFixed(1))} ${unit}`;
}

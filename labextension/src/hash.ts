// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

/**
 * The source hash of docs/protocol.md section 1, computed synchronously in the page.
 *
 * `crypto.subtle` is async and missing in insecure contexts (JupyterHub over
 * plain http), so this module carries its own SHA-256. It has no imports so
 * that node can load the compiled file directly in tests.
 */

/**
 * The hash of a complete cell source: `"sha256:"` + lowercase hex SHA-256 of
 * its UTF-8 bytes, with no normalisation of line endings or Unicode forms.
 *
 * @param source - The complete cell source.
 * @returns The hash, or `null` when the string holds a lone surrogate and so
 *   has no UTF-8 encoding (TextEncoder would silently replace it).
 */
export function sourceHash(source: string): string | null {
  const bytes = Private.encodeUtf8(source);
  return bytes === null ? null : 'sha256:' + Private.sha256Hex(bytes);
}

/**
 * The number of UTF-8 bytes of a string, counting a lone surrogate as the
 * three bytes of the replacement character, as TextEncoder would.
 *
 * @param s - The string to measure.
 */
export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) {
      n += 1;
    } else if (c < 0x800) {
      n += 2;
    } else if (Private.isPairAt(s, i)) {
      n += 4;
      i++;
    } else {
      n += 3;
    }
  }
  return n;
}

/**
 * Whether a string is well-formed UTF-16 (has no lone surrogate).
 *
 * @param s - The string to check.
 */
export function isWellFormed(s: string): boolean {
  const native = (s as { isWellFormed?: () => boolean }).isWellFormed;
  if (typeof native === 'function') {
    return native.call(s);
  }
  return !Private.LONE_SURROGATE.test(s);
}

namespace Private {
  /**
   * A high surrogate not followed by a low one, or a low one not preceded
   * by a high one.
   */
  export const LONE_SURROGATE =
    /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?:^|[^\uD800-\uDBFF])[\uDC00-\uDFFF]/;

  /**
   * Whether a surrogate pair starts at index `i`.
   */
  export function isPairAt(s: string, i: number): boolean {
    const c = s.charCodeAt(i);
    if (c < 0xd800 || c > 0xdbff || i + 1 >= s.length) {
      return false;
    }
    const d = s.charCodeAt(i + 1);
    return d >= 0xdc00 && d <= 0xdfff;
  }

  /**
   * The UTF-8 bytes of a string, or `null` when it is not well-formed.
   */
  export function encodeUtf8(s: string): Uint8Array | null {
    if (!isWellFormed(s)) {
      return null;
    }
    const out = new Uint8Array(utf8Length(s));
    let j = 0;
    for (let i = 0; i < s.length; i++) {
      let c = s.charCodeAt(i);
      if (c < 0x80) {
        out[j++] = c;
      } else if (c < 0x800) {
        out[j++] = 0xc0 | (c >> 6);
        out[j++] = 0x80 | (c & 0x3f);
      } else if (c >= 0xd800 && c <= 0xdbff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (s.charCodeAt(++i) - 0xdc00);
        out[j++] = 0xf0 | (c >> 18);
        out[j++] = 0x80 | ((c >> 12) & 0x3f);
        out[j++] = 0x80 | ((c >> 6) & 0x3f);
        out[j++] = 0x80 | (c & 0x3f);
      } else {
        out[j++] = 0xe0 | (c >> 12);
        out[j++] = 0x80 | ((c >> 6) & 0x3f);
        out[j++] = 0x80 | (c & 0x3f);
      }
    }
    return out;
  }

  /**
   * The SHA-256 round constants (FIPS 180-4, section 4.2.2).
   */
  const K = new Uint32Array([
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
    0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
    0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2
  ]);

  /**
   * The lowercase hex SHA-256 digest of some bytes.
   */
  export function sha256Hex(data: Uint8Array): string {
    // Pad to a multiple of 64 bytes: 0x80, zeros, then the bit length.
    const padded = new Uint8Array(((data.length + 72) >> 6) << 6);
    padded.set(data);
    padded[data.length] = 0x80;
    const view = new DataView(padded.buffer);
    view.setUint32(padded.length - 8, Math.floor(data.length / 0x20000000));
    view.setUint32(padded.length - 4, (data.length << 3) >>> 0);

    const h = new Uint32Array([
      0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c,
      0x1f83d9ab, 0x5be0cd19
    ]);
    const w = new Uint32Array(64);
    for (let off = 0; off < padded.length; off += 64) {
      for (let t = 0; t < 16; t++) {
        w[t] = view.getUint32(off + 4 * t);
      }
      for (let t = 16; t < 64; t++) {
        const a = w[t - 15];
        const b = w[t - 2];
        const s0 = rotr(a, 7) ^ rotr(a, 18) ^ (a >>> 3);
        const s1 = rotr(b, 17) ^ rotr(b, 19) ^ (b >>> 10);
        w[t] = (w[t - 16] + s0 + w[t - 7] + s1) | 0;
      }
      let [a, b, c, d, e, f, g, hh] = h;
      for (let t = 0; t < 64; t++) {
        const t1 =
          (hh +
            (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) +
            ((e & f) ^ (~e & g)) +
            K[t] +
            w[t]) |
          0;
        const t2 =
          ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) +
            ((a & b) ^ (a & c) ^ (b & c))) |
          0;
        hh = g;
        g = f;
        f = e;
        e = (d + t1) | 0;
        d = c;
        c = b;
        b = a;
        a = (t1 + t2) | 0;
      }
      h[0] += a;
      h[1] += b;
      h[2] += c;
      h[3] += d;
      h[4] += e;
      h[5] += f;
      h[6] += g;
      h[7] += hh;
    }
    let hex = '';
    for (let i = 0; i < 8; i++) {
      hex += (h[i] >>> 0).toString(16).padStart(8, '0');
    }
    return hex;
  }

  /**
   * Rotate a 32-bit word right.
   */
  function rotr(x: number, n: number): number {
    return (x >>> n) | (x << (32 - n));
  }
}

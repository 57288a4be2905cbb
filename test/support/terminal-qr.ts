// Reads a QR code back from what `qrcode`'s small terminal renderer printed: each character cell
// is two modules (top, bottom) drawn with half blocks in the current foreground colour over a white
// background; the cells are turned back into a module matrix, drawn into an RGBA image with a
// quiet zone, and decoded with jsQR. No part of the code that printed it is used.

import jsQRModule from 'jsqr';

// jsqr is CommonJS whose types say `export default`: under NodeNext the default import is the
// module object; at run time it is the function itself (which also carries `.default`).
const jsQR = ((jsQRModule as unknown as { default?: unknown }).default ?? jsQRModule) as unknown as typeof jsQRModule.default;

const ESC = /\x1b\[(\d+)m/y;

/** Dark-module rows, two per printed line. Cells after a reset (outside the code) read as light. */
export function qrMatrix(printed: string): boolean[][] {
  const rows: boolean[][] = [];
  for (const line of printed.split('\n')) {
    if (!line.includes('\x1b[')) continue;
    let fgDark = false;
    const top: boolean[] = [];
    const bottom: boolean[] = [];
    for (let i = 0; i < line.length;) {
      ESC.lastIndex = i;
      const m = ESC.exec(line);
      if (m) {
        const code = Number(m[1]);
        // 0 resets to the terminal's colours (outside the code), 30 is black ink, 37 white ink.
        if (code === 30) fgDark = true;
        else if (code === 0 || code === 37) fgDark = false;
        i = ESC.lastIndex;
        continue;
      }
      const ch = line[i++]!;
      // The background is white inside the code and the terminal's own outside it: light either way.
      if (ch === ' ') {
        top.push(false);
        bottom.push(false);
      } else if (ch === '▀') {
        top.push(fgDark);
        bottom.push(false);
      } else if (ch === '▄') {
        top.push(false);
        bottom.push(fgDark);
      } else if (ch === '█') {
        top.push(fgDark);
        bottom.push(fgDark);
      } else throw new Error(`unexpected character ${JSON.stringify(ch)} in the QR code`);
    }
    if (top.length) rows.push(top, bottom);
  }
  return rows;
}

/** The text the printed QR code holds, or null when it does not decode. */
export function decodeTerminalQr(printed: string, scale = 6): string | null {
  const rows = qrMatrix(printed);
  const width = Math.max(...rows.map((r) => r.length));
  const quiet = 4;
  const w = (width + 2 * quiet) * scale;
  const h = (rows.length + 2 * quiet) * scale;
  const img = new Uint8ClampedArray(w * h * 4).fill(255);
  rows.forEach((row, y) =>
    row.forEach((dark, x) => {
      if (!dark) return;
      for (let dy = 0; dy < scale; dy++) {
        for (let dx = 0; dx < scale; dx++) {
          const at = (((y + quiet) * scale + dy) * w + (x + quiet) * scale + dx) * 4;
          img[at] = img[at + 1] = img[at + 2] = 0;
        }
      }
    }),
  );
  return jsQR(img, w, h)?.data ?? null;
}

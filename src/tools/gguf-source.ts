/**
 * A GGUF file opened for conversion: the header is parsed, tensor data stay on disk and are
 * read on demand, a range at a time, so converting a model never holds the whole input.
 */
import { closeSync, readSync } from 'node:fs';
import { ModelFormatError } from '../errors.js';
import { GGUF_MAGIC, parseGGUF, type GGUFParsed } from '../format/gguf.js';
import { openForReading } from '../format/open.js';

export interface GGUFSource extends GGUFParsed {
  path: string;
  /** File size in bytes. */
  size: number;
  /** Read `length` bytes at absolute file offset `offset` into a fresh buffer. */
  read(offset: number, length: number): Uint8Array;
  close(): void;
}

function readAt(fd: number, buf: Uint8Array, offset: number, path: string): void {
  let done = 0;
  while (done < buf.length) {
    const n = readSync(fd, buf, done, buf.length - done, offset + done);
    if (n <= 0) throw new ModelFormatError(`${path}: unexpected end of file at offset ${offset + done}`);
    done += n;
  }
}

/** Open a GGUF file and parse its header; throws ModelFormatError for a missing or non-GGUF file. */
export function openGGUFSource(path: string): GGUFSource {
  const { fd, size } = openForReading(path);
  try {
    if (size < 4) throw new ModelFormatError(`${path}: not a GGUF file (${size} bytes)`);
    const magic = new Uint8Array(4);
    readAt(fd, magic, 0, path);
    const m = new DataView(magic.buffer).getUint32(0, true);
    if (m !== GGUF_MAGIC) throw new ModelFormatError(`${path}: not a GGUF file (bad magic 0x${m.toString(16).padStart(8, '0')})`);
    // parseGGUF checks tensor extents against the buffer length, so it gets a buffer of the full
    // file size of which only a prefix is read. The rest stays zero and untouched (the OS maps
    // such pages lazily, so they cost no memory). A parse is trusted only when everything it read
    // (the header ends at dataOffset) lies inside the prefix; otherwise the prefix grows.
    const whole = new Uint8Array(size);
    let prefix = Math.min(size, 1 << 20);
    for (;;) {
      readAt(fd, whole.subarray(0, prefix), 0, path);
      let parsed: GGUFParsed | undefined;
      let error: unknown;
      try { parsed = parseGGUF(whole, path); } catch (e) { error = e; }
      if (parsed && (parsed.dataOffset <= prefix || prefix === size)) {
        const source: GGUFSource = {
          ...parsed, path, size,
          read(offset, length) {
            const buf = new Uint8Array(length);
            readAt(fd, buf, offset, path);
            return buf;
          },
          close() { closeSync(fd); },
        };
        // Tensor views point into the unread zero pages: drop them so nobody reads zeros.
        for (const t of source.tensors.values()) t.data = new Uint8Array(0);
        return source;
      }
      if (prefix === size) throw error;
      prefix = Math.min(size, prefix * 4);
    }
  } catch (e) {
    closeSync(fd);
    throw e;
  }
}

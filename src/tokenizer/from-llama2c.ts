/**
 * llama2.c tokenizer files (`tokenizer.bin`, `tok512.bin`; written by llama2.c `tokenizer.py export`):
 * int32 max_token_length, then per token: f32 merge score, int32 byte length, UTF-8 bytes.
 * The file stores no token count: tokens run to the end of the file.
 *
 * Conventions of the format (llama2.c run.c): id 0 `<unk>`, id 1 BOS, id 2 EOS, then the
 * byte-fallback tokens `<0x00>`..`<0xFF>` (ids 3..258). Pieces use plain spaces (no `▁`).
 * The export writes BOS/EOS as "\n<s>\n" / "\n</s>\n" (for printing); we store them trimmed
 * ("<s>", "</s>"), as llama.cpp's llama2.c converter does, so both sources behave alike.
 * Models in this format end a story by emitting BOS, so BOS is also an end-of-generation id.
 */
import { ModelFormatError } from '../errors.js';
import { readWholeFile } from '../format/open.js';
import { createSpmTokenizer } from './spm.js';
import type { Tokenizer } from './tokenizer.js';
import { TokenType } from './tokenizer.js';
import { parseBytePiece } from './vocab.js';

/** Read a llama2.c tokenizer file from disk. */
export function loadLlama2cTokenizer(path: string): Tokenizer {
  return parseLlama2cTokenizer(readWholeFile(path), path);
}

/** Parse llama2.c tokenizer bytes; `what` names the file in error messages. */
export function parseLlama2cTokenizer(bytes: Uint8Array, what: string): Tokenizer {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const fail = (msg: string) => new ModelFormatError(`${what}: not a valid llama2.c tokenizer: ${msg}`);
  if (bytes.byteLength < 4) throw fail(`file is truncated (${bytes.byteLength} bytes)`);
  const maxLen = view.getInt32(0, true);
  if (maxLen <= 0 || maxLen > 1 << 16) throw fail(`corrupt header: max_token_length = ${maxLen}`);
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  const pieces: string[] = [];
  const scores: number[] = [];
  let pos = 4;
  while (pos < bytes.byteLength) {
    const id = pieces.length;
    if (pos + 8 > bytes.byteLength) throw fail(`file is truncated inside the header of token ${id} (offset ${pos}, file has ${bytes.byteLength} bytes)`);
    const score = view.getFloat32(pos, true);
    const len = view.getInt32(pos + 4, true);
    pos += 8;
    if (Number.isNaN(score)) throw fail(`token ${id} has a NaN score (offset ${pos - 8})`);
    if (len < 0 || len > maxLen) throw fail(`token ${id} has length ${len} (max_token_length is ${maxLen}, offset ${pos - 4})`);
    if (pos + len > bytes.byteLength) throw fail(`file is truncated inside token ${id} (needs ${len} bytes at offset ${pos}, file has ${bytes.byteLength})`);
    let piece: string;
    try {
      piece = decoder.decode(bytes.subarray(pos, pos + len));
    } catch {
      throw fail(`token ${id} is not valid UTF-8 (offset ${pos})`);
    }
    pos += len;
    pieces.push(piece);
    scores.push(score);
  }
  if (pieces.length < 3) throw fail(`only ${pieces.length} tokens (ids 0, 1, 2 must be unk, BOS, EOS)`);

  const types = pieces.map((p, id): TokenType => {
    if (id === 0) return TokenType.Unknown;
    if (id === 1 || id === 2) return TokenType.Control;
    return parseBytePiece(p) !== undefined ? TokenType.Byte : TokenType.Normal;
  });
  for (const id of [0, 1, 2]) pieces[id] = pieces[id]!.trim();
  return createSpmTokenizer({
    pieces, scores, types,
    unk: 0, bos: 1, eos: 2,
    endOfGeneration: [2, 1],
    addBos: true, addEos: false, addSpacePrefix: true,
    spaceSymbol: ' ',
  });
}

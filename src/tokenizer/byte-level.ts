/**
 * GPT-2 byte-level alphabet: every byte 0..255 is mapped to one printable Unicode character so that
 * byte-level BPE vocabularies can be stored as text (OpenAI GPT-2 `bytes_to_unicode`; also used by
 * llama.cpp `unicode_byte_to_utf8` and Hugging Face's ByteLevel pre-tokenizer/decoder).
 * Printable Latin-1 bytes ('!'..'~', '¡'..'¬', '®'..'ÿ') map to themselves; the remaining 68 bytes
 * map, in byte order, to U+0100, U+0101, ...
 */

/** byte → its stand-in character. */
export const BYTE_TO_CHAR: readonly string[] = (() => {
  const out: string[] = new Array(256);
  const direct = (b: number) => (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  let n = 0;
  for (let b = 0; b < 256; b++) out[b] = String.fromCharCode(direct(b) ? b : 256 + n++);
  return out;
})();

/** stand-in character code → byte (-1 when the character is not part of the alphabet). */
const CHAR_TO_BYTE: Int16Array = (() => {
  const t = new Int16Array(512).fill(-1);
  BYTE_TO_CHAR.forEach((c, b) => { t[c.charCodeAt(0)] = b; });
  return t;
})();

const utf8 = new TextEncoder();

/** Encode text as its UTF-8 bytes written in the byte-level alphabet (one char per byte). */
export function toByteLevel(text: string): string {
  // Fast path: printable ASCII maps to itself except for space/control chars.
  const bytes = utf8.encode(text);
  let s = '';
  for (let i = 0; i < bytes.length; i++) s += BYTE_TO_CHAR[bytes[i]!]!;
  return s;
}

/**
 * Bytes spelled by a byte-level piece, or null when some character is outside the alphabet
 * (e.g. an added token stored as plain text).
 */
export function fromByteLevel(piece: string): Uint8Array | null {
  const out = new Uint8Array(piece.length);
  for (let i = 0; i < piece.length; i++) {
    const c = piece.charCodeAt(i);
    const b = c < 512 ? CHAR_TO_BYTE[c]! : -1;
    if (b < 0) return null;
    out[i] = b;
  }
  return out;
}

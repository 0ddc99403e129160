/**
 * Whole-sequence decoding shared by every tokenizer kind: concatenate each token's bytes (with
 * SentencePiece's rule that a token right after BOS, or first, drops its dummy-prefix space) and
 * decode the UTF-8 once, so characters split across byte tokens come out whole.
 */
import { TokenType, type Tokenizer } from './tokenizer.js';

const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });

/** Control and unknown tokens: what `skipSpecial` leaves out. */
export function isSpecialToken(tokenizer: Pick<Tokenizer, 'tokenType'>, id: number): boolean {
  const t = tokenizer.tokenType(id);
  return t === TokenType.Control || t === TokenType.Unknown;
}

export function decodeIds(tokenizer: Pick<Tokenizer, 'tokenBytes' | 'tokenType' | 'bos'>, ids: readonly number[], skipSpecial = false): string {
  const parts: Uint8Array[] = [];
  let total = 0;
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i]!;
    if (skipSpecial && isSpecialToken(tokenizer, id)) continue;
    const b = tokenizer.tokenBytes(id, i === 0 || ids[i - 1] === tokenizer.bos);
    parts.push(b);
    total += b.length;
  }
  const all = new Uint8Array(total);
  let at = 0;
  for (const p of parts) { all.set(p, at); at += p.length; }
  return utf8.decode(all);
}

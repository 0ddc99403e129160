/**
 * Added tokens of a Hugging Face tokenizer.json and how they are cut out of input text: scanning left
 * to right, the longest added token starting at the leftmost position wins (tokenizers'
 * AddedVocabulary, an Aho-Corasick LeftmostLongest matcher), honouring lstrip / rstrip / single_word.
 */

/** One tokenizer.json `added_tokens` entry. */
export interface AddedToken {
  id: number;
  content: string;
  special: boolean;
  lstrip: boolean;
  rstrip: boolean;
  normalized: boolean;
  singleWord: boolean;
}

/** A piece of input: raw text still to tokenize, or an added token's id. */
export type Piece = { text: string; id?: undefined } | { id: number; text?: undefined };

const isWs = (c: string | undefined) => c !== undefined && /\p{White_Space}/u.test(c);
const isWordChar = (c: string | undefined) => c !== undefined && /[\p{L}\p{N}\p{M}\p{Pc}]/u.test(c);

/** Leftmost-longest matcher over a set of added tokens. */
export class AddedTokenMatcher {
  private readonly byFirst = new Map<number, AddedToken[]>();

  constructor(tokens: readonly AddedToken[]) {
    for (const t of tokens) {
      if (t.content.length === 0) continue;
      const k = t.content.charCodeAt(0);
      let list = this.byFirst.get(k);
      if (!list) { list = []; this.byFirst.set(k, list); }
      list.push(t);
    }
    for (const list of this.byFirst.values()) list.sort((a, b) => b.content.length - a.content.length || a.id - b.id);
  }

  get empty(): boolean { return this.byFirst.size === 0; }

  /** Split `text` into raw pieces and added-token ids. */
  partition(text: string): Piece[] {
    if (this.empty) return text.length > 0 ? [{ text }] : [];
    const out: Piece[] = [];
    let raw = 0, i = 0;
    while (i < text.length) {
      const list = this.byFirst.get(text.charCodeAt(i));
      const hit = list?.find((t) => text.startsWith(t.content, i) &&
        (!t.singleWord || (!isWordChar(text[i - 1]) && !isWordChar(text[i + t.content.length]))));
      if (!hit) { i++; continue; }
      let start = i;
      if (hit.lstrip) while (start > raw && isWs(text[start - 1])) start--;
      if (start > raw) out.push({ text: text.slice(raw, start) });
      out.push({ id: hit.id });
      i += hit.content.length;
      if (hit.rstrip) while (i < text.length && isWs(text[i])) i++;
      raw = i;
    }
    if (raw < text.length) out.push({ text: text.slice(raw) });
    return out;
  }
}

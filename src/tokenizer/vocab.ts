/**
 * Vocabulary helpers shared by the tokenizer builders: byte-token pieces, special-token
 * partitioning, end-of-turn detection and typed reads of GGUF `tokenizer.ggml.*` metadata.
 */
import { ModelFormatError } from '../errors.js';
import type { MetaValue } from '../format/model-file.js';
import { TokenType } from './tokenizer.js';

/** SentencePiece's visible space, U+2581 "▁", used in place of ' ' inside vocabulary pieces. */
export const SPM_SPACE = '\u2581';

const BYTE_PIECE = /^<0x([0-9A-Fa-f]{2})>$/;

/** The byte of a byte-fallback piece such as `<0x0A>`, or undefined for any other piece. */
export function parseBytePiece(piece: string): number | undefined {
  const m = BYTE_PIECE.exec(piece);
  return m ? parseInt(m[1]!, 16) : undefined;
}

/** A token whose text is matched verbatim in input text (control / user-defined tokens). */
export interface SpecialToken {
  id: number;
  text: string;
}

/** A piece of input text after special-token partitioning: raw text, or an already-known token id. */
export type Fragment = string | number;

/**
 * Order special tokens the way llama.cpp's `tokenizer_st_partition` applies them: longest text
 * first (ties by id), so a longer token always wins over one of its substrings.
 */
export function sortSpecials(tokens: readonly SpecialToken[]): SpecialToken[] {
  return tokens.filter((t) => t.text.length > 0).sort((a, b) => b.text.length - a.text.length || a.id - b.id);
}

/**
 * Split `text` on occurrences of special-token texts (llama.cpp `tokenizer_st_partition`):
 * each special token, longest first, splits every remaining raw fragment at all its
 * non-overlapping occurrences. Empty raw fragments are dropped. `specials` must come from
 * {@link sortSpecials}.
 */
export function splitOnSpecialTokens(text: string, specials: readonly SpecialToken[]): Fragment[] {
  let frags: Fragment[] = text.length > 0 ? [text] : [];
  for (const sp of specials) {
    // Cheap pre-check: most special tokens do not occur in the text at all.
    if (!text.includes(sp.text)) continue;
    const next: Fragment[] = [];
    for (const f of frags) {
      if (typeof f === 'number') { next.push(f); continue; }
      let start = 0;
      for (let at = f.indexOf(sp.text); at !== -1; at = f.indexOf(sp.text, start)) {
        if (at > start) next.push(f.slice(start, at));
        next.push(sp.id);
        start = at + sp.text.length;
      }
      if (start < f.length) next.push(start === 0 ? f : f.slice(start));
    }
    frags = next;
  }
  return frags;
}

/**
 * Texts of tokens that end a turn in common chat formats (the list llama.cpp uses to find
 * end-of-generation tokens when the metadata names only eos).
 */
export const END_OF_TURN_TEXTS: ReadonlySet<string> = new Set([
  '<|eot_id|>', '<|im_end|>', '<|end|>', '<end_of_turn>', '<|endoftext|>', '<|eom_id|>',
  '<EOT>', '_<EOT>', '<｜end▁of▁sentence｜>', '<|end_of_text|>',
]);

/** Typed, validated reads of GGUF metadata; every error names the source file and key. */
export class MetaReader {
  constructor(private readonly meta: ReadonlyMap<string, MetaValue>, readonly source: string) {}

  has(key: string): boolean { return this.meta.has(key); }

  string(key: string): string | undefined {
    const v = this.meta.get(key);
    if (v === undefined) return undefined;
    if (typeof v !== 'string') throw new ModelFormatError(`${this.source}: metadata ${key} should be a string, got ${typeof v}`);
    return v;
  }

  bool(key: string, dflt: boolean): boolean {
    const v = this.meta.get(key);
    if (v === undefined) return dflt;
    if (typeof v !== 'boolean') throw new ModelFormatError(`${this.source}: metadata ${key} should be a bool, got ${typeof v}`);
    return v;
  }

  stringArray(key: string): string[] | undefined {
    const v = this.meta.get(key);
    if (v === undefined) return undefined;
    if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw new ModelFormatError(`${this.source}: metadata ${key} should be an array of strings`);
    return v as string[];
  }

  /** A numeric array of exactly `n` elements (e.g. one score per token). */
  numberArray(key: string, n: number): number[] | undefined {
    const v = this.meta.get(key);
    if (v === undefined) return undefined;
    if (!Array.isArray(v) || v.some((x) => typeof x !== 'number')) throw new ModelFormatError(`${this.source}: metadata ${key} should be an array of numbers`);
    if (v.length !== n) throw new ModelFormatError(`${this.source}: metadata ${key} has ${v.length} entries but the vocabulary has ${n} tokens`);
    return v as number[];
  }

  /**
   * A token id; `dflt` when absent. -1 and 0xFFFFFFFF (how GGUF writers spell "none") give null.
   * Any other id outside the vocabulary is an error.
   */
  tokenId(key: string, n: number, dflt: number | null): number | null {
    const v = this.meta.get(key);
    if (v === undefined) return dflt !== null && dflt < n ? dflt : null;
    if (typeof v !== 'number' || !Number.isInteger(v)) throw new ModelFormatError(`${this.source}: metadata ${key} should be an integer token id`);
    if (v === -1 || v === 0xffffffff) return null;
    if (v < 0 || v >= n) throw new ModelFormatError(`${this.source}: metadata ${key} = ${v} is outside the vocabulary (${n} tokens)`);
    return v;
  }
}

/** The parts every GGUF vocabulary shares, whatever its `tokenizer.ggml.model`. */
export interface GgufVocab {
  pieces: string[];
  types: Uint8Array;
  bos: number | null;
  eos: number | null;
  unk: number | null;
  /** eos, eot and eom ids, plus control/user-defined tokens with a well-known end-of-turn text. */
  endOfGeneration: Set<number>;
}

/**
 * Read `tokenizer.ggml.tokens/token_type` and the special ids, with the given defaults for absent
 * ids (llama.cpp's SPM defaults are unk 0, BOS 1, EOS 2; BPE vocabularies have none).
 */
export function readGgufVocab(r: MetaReader, defaults: { bos: number | null; eos: number | null; unk: number | null }): GgufVocab {
  const pieces = r.stringArray('tokenizer.ggml.tokens');
  if (pieces === undefined || pieces.length === 0) {
    throw new ModelFormatError(`${r.source}: tokenizer metadata tokenizer.ggml.tokens is missing or empty`);
  }
  const n = pieces.length;
  const rawTypes = r.numberArray('tokenizer.ggml.token_type', n);
  const types = new Uint8Array(n).fill(TokenType.Normal);
  if (rawTypes) {
    for (let i = 0; i < n; i++) {
      const t = rawTypes[i]!;
      if (!Number.isInteger(t) || t < 0 || t > TokenType.Byte) throw new ModelFormatError(`${r.source}: token ${i} has unknown token type ${t}`);
      types[i] = t;
    }
  }
  const bos = r.tokenId('tokenizer.ggml.bos_token_id', n, defaults.bos);
  const eos = r.tokenId('tokenizer.ggml.eos_token_id', n, defaults.eos);
  const unk = r.tokenId('tokenizer.ggml.unknown_token_id', n, defaults.unk);
  const endOfGeneration = new Set<number>();
  for (const key of ['eos', 'eot', 'eom']) {
    const id = r.tokenId(`tokenizer.ggml.${key}_token_id`, n, key === 'eos' ? eos : null);
    if (id !== null) endOfGeneration.add(id);
  }
  // Like llama.cpp: well-known end-of-turn texts also end generation (e.g. Gemma's <end_of_turn>).
  for (let i = 0; i < n; i++) {
    if ((types[i] === TokenType.Control || types[i] === TokenType.UserDefined) && END_OF_TURN_TEXTS.has(pieces[i]!)) endOfGeneration.add(i);
  }
  return { pieces, types, bos, eos, unk, endOfGeneration };
}

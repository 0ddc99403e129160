/**
 * Byte-level BPE tokenizer with llama.cpp semantics (llama-vocab.cpp, LLAMA_VOCAB_TYPE_BPE):
 * special tokens are split out first (control tokens only with `parseSpecial`, user-defined tokens
 * always, as llama.cpp does), each text fragment is split by the pre-tokenizer regexes, every word is
 * spelled in the GPT-2 byte alphabet and merged with the BPE ranks.
 */
import { InvalidOptionError } from '../errors.js';
import { BpeModel } from './bpe.js';
import { fromByteLevel, toByteLevel } from './byte-level.js';
import { LlamaCppSplitter, type PreTokenizerSpec } from './pre-tokenizers.js';
import type { EncodeOptions, Tokenizer } from './tokenizer.js';
import { TokenType } from './tokenizer.js';
import { parseBytePiece, sortSpecials, splitOnSpecialTokens, type SpecialToken } from './vocab.js';
import { decodeIds } from './decode-ids.js';

export interface BpeTokenizerConfig {
  pieces: readonly string[];
  types: Uint8Array;
  /** Merges as "left right" strings (GGUF `tokenizer.ggml.merges`). */
  merges: readonly string[];
  pre: PreTokenizerSpec;
  bos: number | null;
  eos: number | null;
  unk: number | null;
  endOfGeneration: ReadonlySet<number>;
  addBos: boolean;
  addEos: boolean;
  /** Stored for completeness; llama.cpp's BPE path never prepends a space. */
  addSpacePrefix: boolean;
}

const utf8 = new TextEncoder();

/** Split a GGUF merge line at the first space after position 0 (llama.cpp: `word.find(' ', 1)`). */
export function splitMergeLine(line: string): { left: string; right: string } | null {
  const at = line.indexOf(' ', 1);
  return at < 0 ? null : { left: line.slice(0, at), right: line.slice(at + 1) };
}

/** Byte-level BPE tokenizer (GGUF `tokenizer.ggml.model = "gpt2"`). */
export class BpeTokenizer implements Tokenizer {
  readonly kind = 'bpe' as const;
  readonly vocabSize: number;
  readonly bos: number | null;
  readonly eos: number | null;
  readonly unk: number | null;
  readonly endOfGeneration: ReadonlySet<number>;
  readonly addBos: boolean;
  readonly addEos: boolean;
  readonly addSpacePrefix: boolean;
  readonly pre: PreTokenizerSpec;
  private readonly pieces: readonly string[];
  private readonly types: Uint8Array;
  private readonly ids = new Map<string, number>();
  private readonly model: BpeModel;
  private readonly splitter: LlamaCppSplitter;
  private readonly controls: SpecialToken[];
  private readonly userDefined: SpecialToken[];
  private readonly bytesCache: (Uint8Array | undefined)[];

  constructor(c: BpeTokenizerConfig) {
    this.pieces = c.pieces;
    this.types = c.types;
    this.vocabSize = c.pieces.length;
    this.bos = c.bos; this.eos = c.eos; this.unk = c.unk;
    this.endOfGeneration = c.endOfGeneration;
    this.addBos = c.addBos; this.addEos = c.addEos; this.addSpacePrefix = c.addSpacePrefix;
    this.pre = c.pre;
    c.pieces.forEach((p, i) => { if (!this.ids.has(p)) this.ids.set(p, i); });
    const merges = [];
    for (const line of c.merges) { const m = splitMergeLine(line); if (m) merges.push(m); }
    this.model = new BpeModel({ vocab: this.ids, merges, ignoreMerges: c.pre.ignoreMerges });
    this.splitter = new LlamaCppSplitter(c.pre.regexes);
    const specials: SpecialToken[] = [];
    c.pieces.forEach((text, id) => {
      const t = c.types[id];
      if (t === TokenType.Control || t === TokenType.UserDefined || t === TokenType.Unknown) specials.push({ id, text });
    });
    const sorted = sortSpecials(specials);
    this.controls = sorted;
    this.userDefined = sorted.filter((s) => c.types[s.id] === TokenType.UserDefined);
    this.bytesCache = new Array(this.vocabSize);
  }

  encode(text: string, opts: EncodeOptions = {}): number[] {
    const out: number[] = [];
    if (opts.addBos ?? this.addBos) {
      if (this.bos === null) throw new InvalidOptionError('addBos requested but the vocabulary has no BOS token');
      out.push(this.bos);
    }
    const frags = splitOnSpecialTokens(text, opts.parseSpecial ? this.controls : this.userDefined);
    for (const f of frags) {
      if (typeof f === 'number') out.push(f);
      else this.encodeText(f, out);
    }
    if (opts.addEos ?? this.addEos) {
      if (this.eos === null) throw new InvalidOptionError('addEos requested but the vocabulary has no EOS token');
      out.push(this.eos);
    }
    return out;
  }

  /** Pre-tokenize and merge one raw text fragment. */
  private encodeText(text: string, out: number[]): void {
    for (const word of this.splitter.split(text)) {
      this.model.encodeWord(toByteLevel(word), out, (sym, o) => {
        // llama.cpp: a symbol missing from the vocabulary falls back to its single characters
        for (const ch of sym) { const id = this.ids.get(ch); if (id !== undefined) o.push(id); }
      });
    }
  }

  piece(id: number): string { this.check(id); return this.pieces[id]!; }
  tokenId(piece: string): number | undefined { return this.ids.get(piece); }
  tokenType(id: number): TokenType { this.check(id); return this.types[id]! as TokenType; }

  tokenBytes(id: number): Uint8Array {
    this.check(id);
    let b = this.bytesCache[id];
    if (!b) {
      const p = this.pieces[id]!;
      const t = this.types[id];
      if (t === TokenType.Byte) { const v = parseBytePiece(p); b = v === undefined ? utf8.encode(p) : Uint8Array.of(v); }
      else if (t === TokenType.Normal || t === TokenType.Undefined || t === TokenType.Unused) b = fromByteLevel(p) ?? utf8.encode(p);
      else b = utf8.encode(p); // control / user-defined / unknown: the text itself
      this.bytesCache[id] = b;
    }
    return b;
  }

  decode(ids: readonly number[], opts: { skipSpecial?: boolean } = {}): string {
    return decodeIds(this, ids, opts.skipSpecial ?? false);
  }

  private check(id: number): void {
    if (!Number.isInteger(id) || id < 0 || id >= this.vocabSize) throw new InvalidOptionError(`token id ${id} is outside the vocabulary (${this.vocabSize} tokens)`);
  }
}

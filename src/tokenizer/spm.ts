/**
 * SentencePiece-style BPE tokenizer (llama2.c `run.c` encode, llama.cpp `llm_tokenizer_spm`,
 * GGUF `tokenizer.ggml.model = "llama"`).
 *
 * Encoding: the text is split into Unicode characters; the adjacent pair whose concatenation
 * is a vocabulary piece with the highest score is merged, repeatedly (ties: leftmost pair),
 * until no pair merges. Characters that are no piece fall back to byte tokens `<0xNN>` (or unk).
 * A dummy-prefix space is added before text that starts the input or follows a special token
 * (add_space_prefix). A doubly linked list of symbols plus a max-heap of candidate bigrams with
 * lazy invalidation makes this O(n log n) instead of llama2.c's O(n²) rescans.
 *
 * Pieces of type control, unknown, byte and unused are never formed by merging ordinary text
 * (as in SentencePiece itself), so typed `</s>` or `<0x41>` stays text. User-defined pieces are
 * always split out of the text first (SentencePiece user_defined_symbols, llama.cpp partition);
 * control/unknown pieces only when `parseSpecial` is set.
 */
import type { EncodeOptions, Tokenizer } from './tokenizer.js';
import { TokenType } from './tokenizer.js';
import { parseBytePiece, SPM_SPACE, sortSpecials, splitOnSpecialTokens, type SpecialToken } from './vocab.js';
import { decodeIds } from './decode-ids.js';

/** Everything an SPM tokenizer needs, independent of the file format it came from. */
export interface SpmVocab {
  /** Vocabulary pieces, index = token id. Spaces are spelled `spaceSymbol`. */
  pieces: readonly string[];
  /** Merge priority per token (higher merges first). */
  scores: ArrayLike<number>;
  types: ArrayLike<TokenType>;
  bos: number | null;
  eos: number | null;
  unk: number | null;
  /** Ids that end generation (eos, eot, ...). */
  endOfGeneration: Iterable<number>;
  addBos: boolean;
  addEos: boolean;
  /** Add the dummy-prefix space before text at the start / after a special token. */
  addSpacePrefix: boolean;
  /** How a space is written in the pieces: `▁` in GGUF/SentencePiece, ' ' in llama2.c tokenizer.bin. */
  spaceSymbol: string;
}

interface Bigram {
  score: number;
  left: number;
  right: number;
  /** Length (UTF-16 units) of the merged text; a mismatch when popped means the entry is stale. */
  len: number;
}

/** Higher score first; equal scores: leftmost first (llama.cpp `llm_bigram_spm::comparator`). */
function before(a: Bigram, b: Bigram): boolean {
  return a.score > b.score || (a.score === b.score && a.left < b.left);
}

/** Binary max-heap of bigrams ordered by {@link before}. */
class BigramHeap {
  private readonly items: Bigram[] = [];
  get size(): number { return this.items.length; }
  push(b: Bigram): void {
    const h = this.items;
    let i = h.length;
    h.push(b);
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!before(b, h[p]!)) break;
      h[i] = h[p]!;
      i = p;
    }
    h[i] = b;
  }
  pop(): Bigram | undefined {
    const h = this.items;
    const top = h[0];
    const last = h.pop();
    if (h.length === 0 || last === undefined) return top;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= h.length) break;
      const r = l + 1;
      const c = r < h.length && before(h[r]!, h[l]!) ? r : l;
      if (!before(h[c]!, last)) break;
      h[i] = h[c]!;
      i = c;
    }
    h[i] = last;
    return top;
  }
}

const utf8 = new TextEncoder();

/** Build a SentencePiece-style tokenizer from a vocabulary description. */
export function createSpmTokenizer(v: SpmVocab): Tokenizer {
  return new SpmTokenizer(v);
}

class SpmTokenizer implements Tokenizer {
  readonly kind = 'spm' as const;
  readonly vocabSize: number;
  readonly bos: number | null;
  readonly eos: number | null;
  readonly unk: number | null;
  readonly endOfGeneration: ReadonlySet<number>;
  readonly addBos: boolean;
  readonly addEos: boolean;
  readonly addSpacePrefix: boolean;
  private readonly pieces: readonly string[];
  private readonly scores: Float64Array;
  private readonly types: Uint8Array;
  private readonly spaceSymbol: string;
  /** piece → id for every piece (last id wins on duplicates, as in llama.cpp). */
  private readonly ids = new Map<string, number>();
  /** piece → id for the pieces ordinary text may become (normal and user-defined). */
  private readonly textIds = new Map<string, number>();
  /** byte value → byte-fallback token id (-1 when the vocabulary lacks it). */
  private readonly byteIds = new Int32Array(256).fill(-1);
  private readonly alwaysSpecials: SpecialToken[];
  private readonly allSpecials: SpecialToken[];
  private readonly bytesCache: (Uint8Array | undefined)[];

  constructor(v: SpmVocab) {
    const n = v.pieces.length;
    this.vocabSize = n;
    this.pieces = v.pieces;
    this.scores = Float64Array.from({ length: n }, (_, i) => v.scores[i] ?? 0);
    this.types = Uint8Array.from({ length: n }, (_, i) => v.types[i] ?? TokenType.Normal);
    this.bos = v.bos;
    this.eos = v.eos;
    this.unk = v.unk;
    this.endOfGeneration = new Set(v.endOfGeneration);
    this.addBos = v.addBos;
    this.addEos = v.addEos;
    this.addSpacePrefix = v.addSpacePrefix;
    this.spaceSymbol = v.spaceSymbol;
    this.bytesCache = new Array(n);
    const always: SpecialToken[] = [];
    const special: SpecialToken[] = [];
    for (let id = 0; id < n; id++) {
      const p = v.pieces[id]!;
      const t = this.types[id]! as TokenType;
      this.ids.set(p, id);
      if (t === TokenType.Byte) {
        const b = parseBytePiece(p);
        if (b !== undefined) this.byteIds[b] = id;
      } else if (t === TokenType.Normal || t === TokenType.UserDefined || t === TokenType.Undefined) {
        this.textIds.set(p, id);
      }
      // User-defined pieces are matched verbatim, so their text is the raw input text.
      if (t === TokenType.UserDefined) always.push({ id, text: p });
      if (t === TokenType.Control || t === TokenType.Unknown) special.push({ id, text: p });
    }
    this.alwaysSpecials = sortSpecials(always);
    this.allSpecials = sortSpecials([...always, ...special]);
  }

  encode(text: string, opts: EncodeOptions = {}): number[] {
    const out: number[] = [];
    if ((opts.addBos ?? this.addBos) && this.bos !== null) out.push(this.bos);
    const frags = splitOnSpecialTokens(text, opts.parseSpecial ? this.allSpecials : this.alwaysSpecials);
    // llama.cpp: the dummy prefix goes before text at the start and after every special token.
    let prevSpecial = true;
    for (const f of frags) {
      if (typeof f === 'number') {
        out.push(f);
        prevSpecial = true;
      } else {
        this.encodeText(this.addSpacePrefix && prevSpecial ? ' ' + f : f, out);
        prevSpecial = false;
      }
    }
    if ((opts.addEos ?? this.addEos) && this.eos !== null) out.push(this.eos);
    return out;
  }

  /** Greedy highest-score pair merging over one raw text fragment; appends ids to `out`. */
  private encodeText(raw: string, out: number[]): void {
    const text = this.spaceSymbol === ' ' ? raw : raw.replaceAll(' ', this.spaceSymbol);
    const sym = Array.from(text); // Unicode code points; '' marks a symbol merged away
    const n = sym.length;
    if (n === 0) return;
    const next = new Int32Array(n);
    const prev = new Int32Array(n);
    for (let i = 0; i < n; i++) { prev[i] = i - 1; next[i] = i + 1 < n ? i + 1 : -1; }
    const heap = new BigramHeap();
    const tryAdd = (left: number, right: number): void => {
      if (left < 0 || right < 0) return;
      const merged = sym[left]! + sym[right]!;
      const id = this.textIds.get(merged);
      if (id !== undefined) heap.push({ score: this.scores[id]!, left, right, len: merged.length });
    };
    for (let i = 0; i + 1 < n; i++) tryAdd(i, i + 1);
    while (heap.size > 0) {
      const b = heap.pop()!;
      const l = sym[b.left]!;
      const r = sym[b.right]!;
      // Stale entry: one side was merged away or grew since this bigram was queued.
      if (l === '' || r === '' || next[b.left] !== b.right || l.length + r.length !== b.len) continue;
      sym[b.left] = l + r;
      sym[b.right] = '';
      const after = next[b.right]!;
      next[b.left] = after;
      if (after >= 0) prev[after] = b.left;
      tryAdd(prev[b.left]!, b.left);
      tryAdd(b.left, after);
    }
    // Symbol 0 is never merged away (merges keep the left symbol).
    for (let i = 0; i !== -1; i = next[i]!) {
      const id = this.textIds.get(sym[i]!);
      if (id !== undefined) { out.push(id); continue; }
      for (const byte of utf8.encode(sym[i]!)) {
        const bid = this.byteIds[byte]!;
        if (bid >= 0) out.push(bid);
        else if (this.unk !== null) out.push(this.unk);
      }
    }
  }

  piece(id: number): string {
    this.check(id);
    return this.pieces[id]!;
  }

  tokenId(piece: string): number | undefined {
    return this.ids.get(piece);
  }

  tokenType(id: number): TokenType {
    this.check(id);
    return this.types[id]! as TokenType;
  }

  /**
   * Bytes of a token (llama.cpp `token_to_piece` with special = true): byte tokens give their
   * byte; normal pieces their text with `▁` → ' ', dropping the dummy-prefix space when
   * `afterBos` (first token of a sequence or right after BOS, as llama2.c and llama.cpp do);
   * control, unknown and user-defined tokens their text verbatim; unused tokens nothing.
   */
  tokenBytes(id: number, afterBos = false): Uint8Array {
    this.check(id);
    let bytes = this.bytesCache[id];
    if (bytes === undefined) {
      const t = this.types[id]! as TokenType;
      const p = this.pieces[id]!;
      if (t === TokenType.Byte) {
        const b = parseBytePiece(p);
        bytes = b === undefined ? utf8.encode(p) : Uint8Array.of(b);
      } else if (t === TokenType.Control || t === TokenType.Unknown || t === TokenType.UserDefined) {
        bytes = utf8.encode(p);
      } else if (t === TokenType.Unused) {
        bytes = new Uint8Array(0);
      } else {
        bytes = utf8.encode(this.spaceSymbol === ' ' ? p : p.replaceAll(this.spaceSymbol, ' '));
      }
      this.bytesCache[id] = bytes;
    }
    const normal = this.types[id] === TokenType.Normal || this.types[id] === TokenType.Undefined;
    if (afterBos && this.addSpacePrefix && normal && bytes[0] === 0x20) return bytes.subarray(1);
    return bytes;
  }

  /**
   * Decode ids to text. Special (control/unknown) tokens are rendered as their text unless
   * `skipSpecial`; incomplete or invalid UTF-8 becomes U+FFFD.
   */
  decode(ids: readonly number[], opts: { skipSpecial?: boolean } = {}): string {
    return decodeIds(this, ids, opts.skipSpecial ?? false);
  }

  private check(id: number): void {
    if (!Number.isInteger(id) || id < 0 || id >= this.vocabSize) {
      throw new RangeError(`token id ${id} is out of range (the vocabulary has ${this.vocabSize} tokens)`);
    }
  }
}

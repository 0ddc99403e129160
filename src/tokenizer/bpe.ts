/**
 * Byte-pair-encoding merge engine (Sennrich et al. 2016; GPT-2 byte-level BPE): a word starts as one
 * symbol per character and the adjacent pair with the lowest merge rank is merged until no ranked
 * pair remains; ties go to the leftmost pair (llama.cpp llm_tokenizer_bpe_session and Hugging Face
 * tokenizers' BPE agree on this order). Pairs are looked up by id in a rank map, the merge loop is
 * a binary heap over a linked list of symbols (O(n log n) per word), and results are cached per word.
 */

/** A ranked merge: `left right` → `merged`. */
export interface BpeMerge { left: string; right: string }

export interface BpeModelOptions {
  /** Token string → id. */
  vocab: ReadonlyMap<string, number>;
  /** Merges in rank order (index = rank). Merges whose parts or result are not in the vocabulary are skipped. */
  merges: readonly BpeMerge[];
  /** Look a whole word up in the vocabulary before merging (Llama 3 `ignore_merges`). */
  ignoreMerges?: boolean;
  /** Maximum number of cached words (default 50 000; 0 disables the cache). */
  cacheSize?: number;
}

/** Result of merging one word: ids, with -1 for a final symbol that is not in the vocabulary. */
export type UnknownHandler = (symbol: string, out: number[]) => void;

const NO_RANK = 0x7fffffff;

/** A BPE merge model over a fixed vocabulary. */
export class BpeModel {
  readonly vocab: ReadonlyMap<string, number>;
  readonly ignoreMerges: boolean;
  /** (leftId * stride + rightId) → rank * 2^21-free packing: rank and merged id kept in two maps. */
  private readonly rank = new Map<number, number>();
  private readonly mergedId = new Map<number, number>();
  private readonly stride: number;
  private readonly cache = new Map<string, number[]>();
  private readonly cacheSize: number;

  constructor(o: BpeModelOptions) {
    this.vocab = o.vocab;
    this.ignoreMerges = o.ignoreMerges ?? false;
    this.cacheSize = o.cacheSize ?? 50_000;
    let maxId = 0;
    for (const id of o.vocab.values()) if (id > maxId) maxId = id;
    this.stride = maxId + 1;
    o.merges.forEach((m, r) => {
      const a = o.vocab.get(m.left), b = o.vocab.get(m.right), c = o.vocab.get(m.left + m.right);
      if (a === undefined || b === undefined || c === undefined) return;
      const key = a * this.stride + b;
      if (!this.rank.has(key)) { this.rank.set(key, r); this.mergedId.set(key, c); }
    });
  }

  /** Number of usable merges. */
  get mergeCount(): number { return this.rank.size; }

  /**
   * Token ids of one pre-tokenized word. Characters (code points) missing from the vocabulary are
   * passed to `unknown`, which appends whatever ids stand for them (byte fallback, unk, nothing).
   */
  encodeWord(word: string, out: number[], unknown: UnknownHandler): void {
    const cached = this.cache.get(word);
    if (cached) { for (const id of cached) out.push(id); return; }
    const start = out.length;
    this.merge(word, out, unknown);
    if (this.cacheSize > 0) {
      if (this.cache.size >= this.cacheSize) this.cache.clear();
      this.cache.set(word, out.slice(start));
    }
  }

  private merge(word: string, out: number[], unknown: UnknownHandler): void {
    if (this.ignoreMerges) {
      const whole = this.vocab.get(word);
      if (whole !== undefined) { out.push(whole); return; }
    }
    // Initial symbols: one per code point; unknown ones keep their text for the fallback.
    const ids: number[] = [];
    const texts: string[] = [];
    for (const ch of word) {
      const id = this.vocab.get(ch);
      ids.push(id ?? -1);
      texts.push(ch);
    }
    const n = ids.length;
    if (n === 1) { this.emit(ids[0]!, texts[0]!, out, unknown); return; }
    if (n <= 24) this.mergeSmall(ids, texts);
    else this.mergeHeap(ids, texts);
    for (let i = 0; i < ids.length; i++) if (ids[i] !== -2) this.emit(ids[i]!, texts[i]!, out, unknown);
  }

  private emit(id: number, text: string, out: number[], unknown: UnknownHandler): void {
    if (id >= 0) out.push(id);
    else unknown(text, out);
  }

  private pairRank(a: number, b: number): number {
    if (a < 0 || b < 0) return NO_RANK;
    return this.rank.get(a * this.stride + b) ?? NO_RANK;
  }

  /** Quadratic scan, fastest for short words. Merged-away slots are compacted out. */
  private mergeSmall(ids: number[], texts: string[]): void {
    for (;;) {
      let best = NO_RANK, at = -1;
      for (let i = 0; i + 1 < ids.length; i++) {
        const r = this.pairRank(ids[i]!, ids[i + 1]!);
        if (r < best) { best = r; at = i; }
      }
      if (at < 0) return;
      const key = ids[at]! * this.stride + ids[at + 1]!;
      ids[at] = this.mergedId.get(key)!;
      texts[at] = texts[at]! + texts[at + 1]!;
      ids.splice(at + 1, 1);
      texts.splice(at + 1, 1);
    }
  }

  /** Heap of candidate pairs (rank, left position) over a doubly linked symbol list. */
  private mergeHeap(ids: number[], texts: string[]): void {
    const n = ids.length;
    const prev = new Int32Array(n), next = new Int32Array(n);
    for (let i = 0; i < n; i++) { prev[i] = i - 1; next[i] = i + 1 < n ? i + 1 : -1; }
    // heap entries: rank, left, leftId, rightId (to detect stale entries)
    const hr: number[] = [], hl: number[] = [], ha: number[] = [], hb: number[] = [];
    const less = (i: number, j: number) => hr[i]! < hr[j]! || (hr[i] === hr[j] && hl[i]! < hl[j]!);
    const swap = (i: number, j: number) => {
      let t = hr[i]!; hr[i] = hr[j]!; hr[j] = t;
      t = hl[i]!; hl[i] = hl[j]!; hl[j] = t;
      t = ha[i]!; ha[i] = ha[j]!; ha[j] = t;
      t = hb[i]!; hb[i] = hb[j]!; hb[j] = t;
    };
    const push = (left: number) => {
      const right = next[left]!;
      if (right < 0) return;
      const r = this.pairRank(ids[left]!, ids[right]!);
      if (r === NO_RANK) return;
      hr.push(r); hl.push(left); ha.push(ids[left]!); hb.push(ids[right]!);
      let i = hr.length - 1;
      while (i > 0) { const p = (i - 1) >> 1; if (!less(i, p)) break; swap(i, p); i = p; }
    };
    const pop = () => {
      const last = hr.length - 1;
      swap(0, last);
      const r = { left: hl[last]!, a: ha[last]!, b: hb[last]! };
      hr.pop(); hl.pop(); ha.pop(); hb.pop();
      let i = 0;
      for (;;) {
        const l = 2 * i + 1, rr = l + 1;
        let m = i;
        if (l < hr.length && less(l, m)) m = l;
        if (rr < hr.length && less(rr, m)) m = rr;
        if (m === i) break;
        swap(i, m); i = m;
      }
      return r;
    };
    for (let i = 0; i + 1 < n; i++) push(i);
    while (hr.length > 0) {
      const { left, a, b } = pop();
      const right = next[left]!;
      // stale: the left symbol was merged away or either side changed since the entry was pushed
      if (ids[left] !== a || right < 0 || ids[right] !== b || ids[left] === -2) continue;
      ids[left] = this.mergedId.get(a * this.stride + b)!;
      texts[left] = texts[left]! + texts[right]!;
      ids[right] = -2;
      const rn = next[right]!;
      next[left] = rn;
      if (rn >= 0) prev[rn] = left;
      if (prev[left]! >= 0) push(prev[left]!);
      push(left);
    }
  }
}

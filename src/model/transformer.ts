/**
 * The one shared forward pass for every decoder-only family: embeddings → N blocks (norm,
 * attention over the KV cache, FFN, residuals as the spec says) → final norm → logits.
 * Prefill runs the whole batch through each matmul (one read of every weight row); decode is the
 * same code with one token. Scratch buffers are allocated per model and grown only when a larger
 * batch arrives, so decoding allocates nothing but the returned logits.
 */
import { ContextOverflowError, InvalidOptionError } from '../errors.js';
import { KVCache, parseKVCacheType, type KVCacheType, type KVRows } from '../kv/cache.js';
import { f32ToF16 } from '../format/dtypes.js';
import { geluF16, gelu, silu, softcap } from './kernels/activations.js';
import { attention, type AttentionShape } from './kernels/attention.js';
import './kernels/quant/register.js';
import type { WasmBackend } from './kernels/wasm/backend.js';
import { selectMatmul, type BackendName, type MatmulFn } from './kernels/wasm/select.js';
import { layernorm, rmsnorm } from './kernels/norm.js';
import { ropeApply, ropeCosSin } from './kernels/rope.js';
import { readRow } from './kernels/row.js';
import type { ForwardOptions, Model, ModelConfig } from './model.js';
import type { NormKind, NormWeights, TransformerSpec } from './spec.js';
import type { Weight } from './kernels/weight.js';

/**
 * Default batchSize: a prompt longer than this is run in batches, so its activations (tokens ×
 * the FFN width, several arrays of them) stay bounded (llama.cpp's default micro-batch is 512 too).
 */
const DEFAULT_BATCH = 512;

/** Most bytes of logits the wasm backend stages per output product (TransformerModel.outputProjection). */
const OUTPUT_STAGING_BYTES = 4 << 20;

/** Tokens in the load-time warm-up prefill (TransformerModel.warmup): enough for the prefill kernels' multi-token paths. */
const WARMUP_TOKENS = 8;

/**
 * Per-batch scratch (rows = tokens). The attention block's arrays (qkv, q, k, v, att) and the
 * feed-forward's (gate, up) are never live at the same time, so they share one region; proj is h
 * unless the FFN reads the attention's normed input after the attention's output is made
 * (parallel residual). For the 110M shapes and a 128-token batch: 2.6 instead of 4.5 MiB.
 */
interface Scratch {
  cap: number;
  /** The arrays below are views of these blocks (kept here: a managed block lives as long as its array). */
  blocks: Float32Array[];
  x: Float32Array; h: Float32Array; proj: Float32Array;
  q: Float32Array; k: Float32Array; v: Float32Array; qkv: Float32Array; att: Float32Array;
  gate: Float32Array; up: Float32Array;
  cos: Float32Array; sin: Float32Array;
  /**
   * Per layer, the products that share an input (query/key/value; gate/up) as mmShared takes
   * them: made with the scratch, so a forward step builds no arrays for them.
   */
  qkvParts: SharedPart[][]; gateUpParts: SharedPart[][];
}

/** One product of mmShared: out = x · wᵀ, nOut values per token. */
interface SharedPart { out: Float32Array; w: Weight; nOut: number }

/** A Model executing a TransformerSpec. */
export class TransformerModel implements Model {
  readonly config: ModelConfig;
  readonly weightBytes: number;
  private scratch: Scratch | null = null;
  private scores = new Float32Array(0);
  /** What forward({ reuseLogits }) returns (reusedLogits). */
  private logitsBuf: Float32Array = new Float32Array(0);
  private readonly qDim: number;
  private readonly kvDim: number;
  private readonly shapes: AttentionShape[];

  /** Kernel backend computing the matmuls ('wasm' by default, 'js' = reference kernels). */
  readonly backend: BackendName;
  /** Threads computing the forward pass (1 for the 'js' backend). */
  readonly threads: number;
  private readonly mm: MatmulFn;
  /**
   * The wasm backend, when used: scratch and KV caches then live in its memory, so matmuls read
   * and write them in place, and attention and SwiGLU run there too.
   */
  private readonly wasm: WasmBackend | null;

  /** Element type of the caches createCache makes (f32 by default; f16 halves their memory). */
  readonly kvType: KVCacheType;

  /** Most tokens one forward pass computes at once; longer inputs run in batches of this size. */
  readonly batchSize: number;

  constructor(readonly spec: TransformerSpec, weightBytes: number, kernels: { backend?: BackendName; threads?: number; kvType?: KVCacheType; batchSize?: number } = {}) {
    this.kvType = parseKVCacheType(kernels.kvType ?? 'f32');
    const bs = kernels.batchSize ?? DEFAULT_BATCH;
    if (!Number.isSafeInteger(bs) || bs < 1) throw new InvalidOptionError(`batchSize must be a positive integer, got ${String(kernels.batchSize)}`);
    this.batchSize = bs;
    const sel = selectMatmul(kernels);
    this.backend = sel.name;
    this.mm = sel.matmul;
    this.wasm = sel.wasm ?? null;
    this.threads = this.wasm ? this.wasm.threads : 1;
    if (this.wasm) {
      interleaveMatmulWeights(this.wasm, spec);
      normWeightsToHeap(this.wasm, spec);
    }
    this.config = spec.config;
    this.weightBytes = weightBytes;
    const c = spec.config;
    this.qDim = c.nHead * c.headDim;
    this.kvDim = c.nHeadKv * c.headDim;
    this.shapes = spec.layers.map((l) => ({
      nHead: c.nHead, nHeadKv: c.nHeadKv, headDim: c.headDim, scale: spec.attnScale, window: l.window, softcap: spec.attnSoftcap,
    }));
  }

  /**
   * A prefill of WARMUP_TOKENS and one decode step on a throwaway cache. V8 runs new code slowly at
   * first (the wasm kernels start in its baseline tier and are recompiled once hot, the forward
   * pass is JIT-compiled as it runs), so without this the first real request pays for it: the
   * first 128-token prefill of the 15M synth model ran at 3.5k tok/s instead of 5.2k, 110M 6% slower.
   */
  warmup(): void {
    const n = Math.min(WARMUP_TOKENS, this.config.nCtx - 1);
    if (n < 1) return;
    const cache = this.createCache(n + 1);
    this.forward(Array.from({ length: n }, (_, i) => i % this.config.nVocab), cache);
    this.forward([0], cache);
    // its memory goes to the first real cache and batch (a wasm memory's pages stay resident)
    cache.dispose();
    this.releaseScratch();
  }

  /** A cache for up to maxTokens positions (default and maximum: the model's context length). */
  createCache(maxTokens: number = this.config.nCtx): KVCache {
    if (!Number.isInteger(maxTokens) || maxTokens <= 0) throw new InvalidOptionError(`cache size must be a positive integer, got ${maxTokens}`);
    if (maxTokens > this.config.nCtx) {
      throw new ContextOverflowError(`requested context of ${maxTokens} tokens exceeds the model's context length ${this.config.nCtx}`);
    }
    const heap = this.wasm?.heap;
    const cache = new KVCache(this.config.nLayer, this.kvDim, maxTokens, undefined, heap && { f32: heap.f32Managed, f16: heap.u16Managed, release: heap.release }, this.kvType, this.config.nHeadKv);
    this.reserve(Math.min(this.batchSize, maxTokens), cache);
    return cache;
  }

  /**
   * Allocate, and write once, the activation memory a first batch of n tokens on `cache` will use:
   * this model's scratch (zero-filled when made) and the wasm backend's staging (WasmBackend.reserve,
   * rehearsing this batch's matmuls and attention without computing). On the bench VM a fresh page
   * costs ~11 µs on its first write, and a first 127-token prefill of the 110M Q4_0 model wrote
   * ~2000 of them: 10% of its time at one thread, 20% at two. Like llama.cpp's compute buffers,
   * made with its context, this memory is the model's from then on (grown, never shrunk).
   */
  private reserve(n: number, cache: KVCache): void {
    const s = this.scratchFor(n);
    const be = this.wasm;
    if (!be) return;
    const c = this.config, E = c.nEmbd, F = c.nFF;
    const mm = (out: Float32Array, w: Weight, x: Float32Array, nIn: number, nOut: number) => {
      if (be.supports(w.type)) be.matmul(out, w, x, nIn, nOut, n);
    };
    be.reserve(() => {
      for (const L of this.spec.layers) {
        if (L.wqkv) mm(s.qkv, L.wqkv, s.h, E, this.qDim + 2 * this.kvDim);
        else { mm(s.q, L.wq!, s.h, E, this.qDim); mm(s.k, L.wk!, s.h, E, this.kvDim); mm(s.v, L.wv!, s.h, E, this.kvDim); }
        mm(s.proj, L.wo, s.att, this.qDim, E);
        if (L.fusedGateUp) mm(s.up, L.ffnUp, s.h, E, 2 * F);
        else { if (L.ffnGate) mm(s.gate, L.ffnGate, s.h, E, F); mm(L.ffnGate ? s.up : s.gate, L.ffnUp, s.h, E, F); }
        mm(s.proj, L.ffnDown, s.gate, F, E);
      }
      const kc = cache.k[0], vc = cache.v[0];
      if (kc && vc && be.heap.owns(kc) && be.heap.owns(vc)) {
        be.attention(s.att, s.q, kc, vc, n, 0, c.nHead, c.nHeadKv, c.headDim, 1);
        // one query at the cache's last position: the most attention segments a decode step takes
        const qd = this.qDim;
        be.attention(s.att.subarray(0, qd), s.q.subarray(0, qd), kc, vc, 1, cache.capacity - 1, c.nHead, c.nHeadKv, c.headDim, 1);
      }
    });
  }

  /**
   * Run tokens at positions cache.length.. and append their keys/values. Returns a fresh array:
   * the last position's logits (nVocab), or every position's (nTokens × nVocab) with allLogits.
   */
  forward(tokens: ArrayLike<number>, cache: KVCache, opts: ForwardOptions = {}): Float32Array {
    const c = this.config;
    const nT = tokens.length;
    if (nT === 0) throw new InvalidOptionError('forward needs at least one token');
    for (let i = 0; i < nT; i++) {
      const t = tokens[i]!;
      if (!Number.isInteger(t) || t < 0 || t >= c.nVocab) {
        throw new InvalidOptionError(`invalid token id ${t} at index ${i}: ids must be integers in [0, ${c.nVocab})`);
      }
    }
    if (cache.nLayers !== c.nLayer || cache.kvDim !== this.kvDim || cache.heads !== c.nHeadKv) {
      throw new InvalidOptionError(`KV cache shape (${cache.nLayers} layers × ${cache.heads} heads × ${cache.headDim}) does not match the model (${c.nLayer} × ${c.nHeadKv} × ${c.headDim})`);
    }
    cache.ensureRoom(nT); // for all the batches: none is appended unless every one fits
    if (cache.length + nT > c.nCtx) {
      throw new ContextOverflowError(`context is full: ${cache.length} cached + ${nT} new tokens exceed the model's context length ${c.nCtx}`);
    }
    if (nT <= this.batchSize) return this.forwardBatch(tokens, cache, opts);
    // a long prompt in batches: the activations stay bounded by batchSize rows
    const parts: Float32Array[] = [];
    let logits: Float32Array = new Float32Array(0);
    // every batch's logits are kept when all are wanted: then none may be a reused array
    const batchOpts = opts.allLogits ? { ...opts, reuseLogits: false } : opts;
    for (let i = 0; i < nT; i += this.batchSize) {
      const batch = Array.from({ length: Math.min(this.batchSize, nT - i) }, (_, j) => tokens[i + j]!);
      logits = this.forwardBatch(batch, cache, batchOpts);
      if (opts.allLogits) parts.push(logits);
    }
    if (!opts.allLogits) return logits;
    const all = new Float32Array(nT * c.nVocab);
    let o = 0;
    for (const p of parts) { all.set(p, o); o += p.length; }
    return all;
  }

  /** forward() of one batch (tokens and cache already checked). */
  private forwardBatch(tokens: ArrayLike<number>, cache: KVCache, opts: ForwardOptions): Float32Array {
    const spec = this.spec;
    const c = this.config;
    const nT = tokens.length;
    const pos0 = cache.length;
    const s = this.scratchFor(nT);
    if (this.scores.length < pos0 + nT) this.scores = new Float32Array(Math.max(pos0 + nT, Math.min(c.nCtx, 2 * (pos0 + nT))));
    const E = c.nEmbd, qDim = this.qDim, kvDim = this.kvDim, headDim = c.headDim;
    const { x, h, proj, q, k, v, qkv, att, gate, up, cos, sin } = s;

    // Embeddings.
    for (let t = 0; t < nT; t++) {
      // a tied output projection may have been interleaved by the wasm backend, which then reads the row
      if (!this.wasm?.readRow(x, t * E, spec.tokenEmbd, tokens[t]!, E)) readRow(x, t * E, spec.tokenEmbd, tokens[t]!, E);
      if (spec.embdScale !== 1) for (let i = 0; i < E; i++) x[t * E + i] = x[t * E + i]! * spec.embdScale;
      if (spec.posEmbd) {
        readRow(h, 0, spec.posEmbd, pos0 + t, E);
        for (let i = 0; i < E; i++) x[t * E + i] = x[t * E + i]! + h[i]!;
      }
    }
    // Rotary angles, once per position for all layers.
    const rope = spec.rope;
    const half = rope ? rope.nRot >> 1 : 0;
    if (rope) for (let t = 0; t < nT; t++) ropeCosSin(cos, sin, t * half, pos0 + t, rope);

    for (let l = 0; l < spec.layers.length; l++) {
      const L = spec.layers[l]!;
      // Attention input.
      let attnIn = x;
      if (L.attnNorm) { this.layerNorm(h, x, L.attnNorm, E, nT); attnIn = h; }
      if (L.wqkv) {
        const n = qDim + 2 * kvDim;
        this.mm(qkv, L.wqkv, attnIn, E, n, nT);
        addBias(qkv, L.bqkv, n, nT);
        for (let t = 0; t < nT; t++) {
          const b = t * n;
          q.set(qkv.subarray(b, b + qDim), t * qDim);
          k.set(qkv.subarray(b + qDim, b + qDim + kvDim), t * kvDim);
          v.set(qkv.subarray(b + qDim + kvDim, b + n), t * kvDim);
        }
      } else {
        this.mmShared(s.qkvParts[l]!, attnIn, E, nT);
        addBias(q, L.bq, qDim, nT); addBias(k, L.bk, kvDim, nT); addBias(v, L.bv, kvDim, nT);
      }
      if (L.qNorm && L.kNorm) {
        if (spec.qkNorm === 'head') {
          this.normRows(q, q, L.qNorm, headDim, nT * c.nHead, spec.qkNormKind);
          this.normRows(k, k, L.kNorm, headDim, nT * c.nHeadKv, spec.qkNormKind);
        } else {
          this.normRows(q, q, L.qNorm, qDim, nT, spec.qkNormKind);
          this.normRows(k, k, L.kNorm, kvDim, nT, spec.qkNormKind);
        }
      }
      if (rope && this.wasm) {
        this.wasm.ropeRows(q, nT, c.nHead, headDim, rope.nRot, cos, sin, spec.ropeNeox);
        this.wasm.ropeRows(k, nT, c.nHeadKv, headDim, rope.nRot, cos, sin, spec.ropeNeox);
      } else if (rope) {
        for (let t = 0; t < nT; t++) {
          ropeApply(q, t * qDim, c.nHead, headDim, rope.nRot, cos, sin, t * half, spec.ropeNeox);
          ropeApply(k, t * kvDim, c.nHeadKv, headDim, rope.nRot, cos, sin, t * half, spec.ropeNeox);
        }
      }
      const kc = cache.k[l]!, vc = cache.v[l]!;
      this.storeKV(cache, true, kc, k, pos0, nT);
      this.storeKV(cache, false, vc, v, pos0, nT);
      const sh = this.shapes[l]!;
      const wasm = this.wasm;
      if (wasm && sh.window === 0 && sh.softcap === 0 && wasm.heap.owns(kc) && wasm.heap.owns(vc)) {
        wasm.attention(att, q, kc, vc, nT, pos0, c.nHead, c.nHeadKv, headDim, sh.scale);
      } else {
        attention(att, q, kc, vc, pos0, nT, sh, this.scores);
      }
      this.mm(proj, L.wo, att, qDim, E, nT);
      addBias(proj, L.bo, E, nT);
      if (L.postAttnNorm) this.normRows(proj, proj, L.postAttnNorm, E, nT);
      this.residual(x, proj, nT * E);

      // Feed-forward.
      let ffnIn = x;
      if (L.ffnNorm) { this.layerNorm(h, x, L.ffnNorm, E, nT); ffnIn = h; }
      else if (spec.parallelResidual && L.attnNorm) ffnIn = h; // still the attention-normed input
      const F = c.nFF;
      const act = spec.ffnAct === 'silu' ? silu : spec.geluF16 ? geluF16 : gelu;
      if (L.fusedGateUp) {
        this.mm(up, L.ffnUp, ffnIn, E, 2 * F, nT);
        addBias(up, L.bUp, 2 * F, nT);
        for (let t = 0; t < nT; t++) {
          const b = t * 2 * F;
          for (let i = 0; i < F; i++) gate[t * F + i] = act(up[b + i]!) * up[b + F + i]!;
        }
      } else if (L.ffnGate) {
        this.mmShared(s.gateUpParts[l]!, ffnIn, E, nT);
        addBias(gate, L.bGate, F, nT); addBias(up, L.bUp, F, nT);
        if (this.wasm && act === silu) this.wasm.swiglu(gate, gate, up, nT * F);
        else for (let i = 0; i < nT * F; i++) gate[i] = act(gate[i]!) * up[i]!;
      } else {
        this.mm(gate, L.ffnUp, ffnIn, E, F, nT); addBias(gate, L.bUp, F, nT);
        for (let i = 0; i < nT * F; i++) gate[i] = act(gate[i]!);
      }
      this.mm(proj, L.ffnDown, gate, F, E, nT);
      addBias(proj, L.bDown, E, nT);
      if (L.postFfnNorm) this.normRows(proj, proj, L.postFfnNorm, E, nT);
      this.residual(x, proj, nT * E);
    }

    // Output: only the positions whose logits are wanted.
    const first = opts.allLogits ? 0 : nT - 1;
    const nOut = nT - first;
    if (first > 0) x.copyWithin(0, first * E, nT * E);
    this.layerNorm(h, x, spec.outputNorm, E, nOut);
    const logits = opts.reuseLogits ? this.reusedLogits(nOut * c.nVocab) : new Float32Array(nOut * c.nVocab);
    this.outputProjection(logits, h, nOut);
    if (spec.finalSoftcap > 0) softcap(logits, 0, logits.length, spec.finalSoftcap);
    cache.advance(nT);
    return logits;
  }

  /**
   * logits (nOut × nVocab) = the output projection of h's first nOut rows. A result outside the
   * wasm backend's memory is made a few rows at a time: the backend stages each product's output
   * in its memory, and staging is kept for reuse (never shrunk), so all 128 positions of a scoring
   * chunk with a 32000-token vocabulary at once left 16 MiB staged beside the 16 MiB returned
   * (128k tokens: 64 MiB). Each position's logits are the same bits either way.
   */
  private outputProjection(logits: Float32Array, h: Float32Array, nOut: number): void {
    const V = this.config.nVocab, E = this.config.nEmbd, out = this.spec.output;
    const rows = this.wasm && !this.wasm.heap.owns(logits) ? Math.max(1, Math.floor(OUTPUT_STAGING_BYTES / (4 * V))) : nOut;
    // one product (every decode step): no subarray views made
    if (rows >= nOut) { this.mm(logits, out, h, E, V, nOut); return; }
    for (let r = 0; r < nOut; r += rows) {
      const n = Math.min(rows, nOut - r);
      this.mm(logits.subarray(r * V, (r + n) * V), out, h.subarray(r * E, (r + n) * E), E, V, n);
    }
  }

  /**
   * The array forward({ reuseLogits }) returns, n values: in the wasm backend's memory when there is
   * one, so the output matmul writes it in place. A fresh decode-step array cost about 0.2 ms per
   * token on the 110M models (allocating 128 KB and copying the logits out of shared memory): 3% of
   * a Q4_0 step.
   */
  private reusedLogits(n: number): Float32Array {
    // managed: a larger request replaces the block, which returns to the heap once collected
    if (this.logitsBuf.length < n) this.logitsBuf = this.wasm ? this.wasm.heap.f32Managed(n) : new Float32Array(n);
    return this.logitsBuf.length === n ? this.logitsBuf : this.logitsBuf.subarray(0, n);
  }

  /**
   * Products of one input with several weights. On the wasm backend they run as one dispatch
   * (WasmBackend.matmulMany: the same bits as one by one), and the input is quantized once for
   * all of them.
   */
  private mmShared(parts: readonly SharedPart[], x: Float32Array, nIn: number, nT: number): void {
    const wasm = this.wasm;
    let all = wasm !== null;
    for (let i = 0; i < parts.length && all; i++) all = wasm!.supports(parts[i]!.w.type);
    if (all) wasm!.matmulMany(parts, x, nIn, nT);
    else for (const p of parts) this.mm(p.out, p.w, x, nIn, p.nOut, nT);
  }

  /** x += y over n values (the residual stream), in wasm when the backend is. */
  private residual(x: Float32Array, y: Float32Array, n: number): void {
    if (this.wasm) this.wasm.add(x, x, y, n);
    else for (let i = 0; i < n; i++) x[i] = x[i]! + y[i]!;
  }

  /**
   * Append nT rows of src (kvDim values each) at position pos0 of one layer's keys or values
   * (head-major, kv/cache.ts); an f16 cache gets f16 bits (round to nearest even).
   */
  private storeKV(cache: KVCache, keys: boolean, dst: KVRows, src: Float32Array, pos0: number, nT: number): void {
    const { heads, headDim } = cache;
    if (this.wasm?.heap.owns(dst)) { this.wasm.storeKV(dst, keys, src, nT, heads, headDim, pos0); return; }
    for (let t = 0; t < nT; t++) {
      for (let h = 0; h < heads; h++) {
        const s0 = (t * heads + h) * headDim;
        for (let i = 0; i < headDim; i++) {
          const x = src[s0 + i]!;
          dst[cache.index(keys, h, pos0 + t, i)] = dst instanceof Float32Array ? x : f32ToF16(x);
        }
      }
    }
  }

  /** normRows for the model-width norms (attention/FFN input, output): RMSNorm rows in wasm when the backend is. */
  private layerNorm(dst: Float32Array, src: Float32Array, nw: NormWeights, n: number, rows: number): void {
    const be = this.wasm;
    if (!be || this.spec.normKind !== 'rms' || nw.heads || (nw.w && !be.heap.owns(nw.w))) { this.normRows(dst, src, nw, n, rows); return; }
    be.rmsnormRows(dst, src, nw.w, n, rows, this.spec.normEps);
  }

  /** Normalise `rows` rows of n values from src into dst (may alias). */
  private normRows(dst: Float32Array, src: Float32Array, nw: NormWeights, n: number, rows: number, kind: NormKind = this.spec.normKind): void {
    const eps = this.spec.normEps;
    const hs = nw.heads; // per-head scales (row r = token·nHeads + head)
    if (kind === 'rms') for (let r = 0; r < rows; r++) rmsnorm(dst, r * n, src, r * n, hs ? hs[r % hs.length]! : nw.w, n, eps);
    else for (let r = 0; r < rows; r++) layernorm(dst, r * n, src, r * n, hs ? hs[r % hs.length]! : nw.w, nw.b, n, eps);
  }

  private scratchFor(nT: number): Scratch {
    if (this.scratch && this.scratch.cap >= nT) return this.scratch;
    const c = this.config, spec = this.spec;
    const cap = Math.max(nT, this.scratch ? this.scratch.cap : 0);
    this.releaseScratch();
    const half = spec.rope ? spec.rope.nRot >> 1 : 0;
    const heap = this.wasm?.heap;
    const qkvWidth = spec.layers.some((l) => l.wqkv) ? this.qDim + 2 * this.kvDim : 0;
    const attnWidth = qkvWidth + 2 * this.qDim + 2 * this.kvDim; // qkv, q, k, v, att
    const upWidth = spec.layers.some((l) => l.fusedGateUp) ? 2 * c.nFF : c.nFF;
    const ffnWidth = c.nFF + upWidth; // gate, up
    const projOwn = spec.parallelResidual ? c.nEmbd : 0;
    const widths = [c.nEmbd, Math.max(c.nEmbd, 1), projOwn, Math.max(attnWidth, ffnWidth), 2 * half];
    const blocks = widths.map((w) => heap ? heap.f32Managed(cap * w) : new Float32Array(cap * w));
    const [xb, hb, pb, phase, angles] = blocks as [Float32Array, Float32Array, Float32Array, Float32Array, Float32Array];
    let at = 0;
    const take = (b: Float32Array, w: number) => { const a = b.subarray(at, at + cap * w); at += cap * w; return a; };
    const qkv = take(phase, qkvWidth), q = take(phase, this.qDim), k = take(phase, this.kvDim), v = take(phase, this.kvDim), att = take(phase, this.qDim);
    at = 0;
    const gate = take(phase, c.nFF), up = take(phase, upWidth);
    at = 0;
    const cos = take(angles, half), sin = take(angles, half);
    const F = c.nFF;
    const qkvParts = spec.layers.map((L): SharedPart[] => L.wq && L.wk && L.wv
      ? [{ out: q, w: L.wq, nOut: this.qDim }, { out: k, w: L.wk, nOut: this.kvDim }, { out: v, w: L.wv, nOut: this.kvDim }] : []);
    const gateUpParts = spec.layers.map((L): SharedPart[] => L.ffnGate ? [{ out: gate, w: L.ffnGate, nOut: F }, { out: up, w: L.ffnUp, nOut: F }] : []);
    this.scratch = { cap, blocks, x: xb, h: hb, proj: projOwn ? pb : hb, q, k, v, qkv, att, gate, up, cos, sin, qkvParts, gateUpParts };
    return this.scratch;
  }

  /** Give this model's scratch back to the wasm heap now (it is made again, as large, when needed). */
  private releaseScratch(): void {
    const heap = this.wasm?.heap;
    if (heap && this.scratch) for (const b of this.scratch.blocks) heap.release(b);
    this.scratch = null;
  }
}

/**
 * Copy the model-width RMSNorm scales into the backend's memory (they are small f32 arrays the
 * loader converted out of the file), so that layerNorm runs in wasm instead of falling back to JS.
 */
function normWeightsToHeap(be: WasmBackend, spec: TransformerSpec): void {
  const move = (nw: NormWeights | null) => {
    if (!nw?.w || be.heap.owns(nw.w)) return;
    const copy = be.heap.f32(nw.w.length);
    copy.set(nw.w);
    nw.w = copy;
  };
  move(spec.outputNorm);
  for (const l of spec.layers) { move(l.attnNorm); move(l.ffnNorm); }
}

/** buf[t][i] += b[i] for every row (no-op without a bias). */
function addBias(buf: Float32Array, b: Float32Array | null, n: number, nT: number): void {
  if (!b) return;
  for (let t = 0; t < nT; t++) for (let i = 0; i < n; i++) buf[t * n + i] = buf[t * n + i]! + b[i]!;
}

/**
 * Give the wasm backend the matmul weights for its row-interleaved decode layout
 * (WasmBackend.interleaveWhenUsed: at load for weights read into its memory, else at first use).
 * A token embedding tied to the output projection is interleaved too and its rows are then read
 * through WasmBackend.readRow; position embeddings are never matmul weights.
 */
function interleaveMatmulWeights(be: WasmBackend, spec: TransformerSpec): void {
  const ws = [spec.output];
  for (const L of spec.layers) ws.push(...[L.wq, L.wk, L.wv, L.wqkv, L.wo, L.ffnGate, L.ffnUp, L.ffnDown].filter((w): w is Weight => w !== null));
  for (const w of ws) if (w.data !== spec.posEmbd?.data) be.interleaveWhenUsed(w);
}

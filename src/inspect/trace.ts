/**
 * The inspector's tracer: a GenerationTracer (generate.ts's `trace` option) that records, for
 * every step of the loop, what the model proposed and what the chain made of it:
 *   raw logits → softmax probabilities (top K) → the live candidates after each processor →
 *   the chosen token → the KV cache after its forward pass.
 * generate() only calls these hooks when a tracer is given, so tracing costs nothing otherwise.
 *
 * Per-processor stages are recomputed here on a private copy of the step's logits, running the
 * chain's processors in order with the same context and the same (not yet advanced) processor
 * state as the loop did; the sampler is never called, so the chain's Rng is untouched and a traced
 * run chooses exactly the tokens an untraced one does.
 */
import type { ChainDescription } from '../decode/chain.js';
import { createCandidates, fillCandidates } from '../decode/candidates.js';
import { logSumExp } from '../decode/logprobs.js';
import type { Candidates, ParamValue } from '../decode/types.js';
import { InvalidOptionError } from '../errors.js';
import type { FinishReason, StopDetail } from '../generate/events.js';
import { generate, type GenerateOptions, type GenerationTracer, type TraceStepInfo } from '../generate/generate.js';
import type { LanguageModel } from '../generate/language-model.js';
import type { Tokenizer } from '../tokenizer/tokenizer.js';

/** One token with its score and probability within some distribution. */
export interface TraceCandidate {
  id: number;
  /** The token's text (its bytes decoded as UTF-8; a partial character shows as U+FFFD). */
  piece: string;
  /** The (processed) logit; −Infinity for a banned token. */
  logit: number;
  /** Probability within the distribution this entry belongs to. */
  prob: number;
  /** Whether the token is still live where the sampler chose (survived every processor). */
  kept: boolean;
}

/** The live candidates after one processor of the chain. */
export interface TraceStage {
  name: string;
  params: Readonly<Record<string, ParamValue>>;
  /** Candidates still live (a banned, −∞ token counts as removed). */
  size: number;
  /** The best live candidates with their probabilities (softmax over the live set). */
  top: TraceCandidate[];
}

/** One step of the loop. */
export interface TraceStep {
  sequence: number;
  /** 0-based index of the generated token. */
  index: number;
  /** Position of the chosen token in the context (= cache length when it was chosen). */
  position: number;
  chosen: {
    id: number;
    piece: string;
    /** Natural log-probability under the raw distribution, and its probability. */
    logprob: number;
    prob: number;
    /** Probability in the distribution the sampler drew from (0 when the token was removed, greedy picks included). */
    processedProb: number;
    /** Rank of the chosen token in the raw distribution (0 = most likely). */
    rawRank: number;
  };
  /** The raw distribution: softmax over the full vocabulary. */
  raw: { vocab: number; logSumExp: number; maxLogit: number; top: TraceCandidate[] };
  /** Candidates entering the chain (the whole vocabulary), then after each processor, in chain order. */
  stages: TraceStage[];
  /** The sampler that chose (greedy or dist). */
  sampler: string;
  /** KV cache before (when choosing) and after this token's forward pass (null: no forward ran, generation ended). */
  cache: { before: { length: number; bytes: number }; after: { length: number; bytes: number } | null };
  timings: { selectMs: number; forwardMs: number | null; traceMs: number };
}

/** A whole traced generation. */
export interface Trace {
  prompt: { tokens: number[]; pieces: string[] };
  prefill: { ms: number; cacheLength: number; cacheBytes: number };
  steps: TraceStep[];
  /** How many entries each `top` list holds at most. */
  top: number;
  chain: ChainDescription | null;
  text: string;
  tokens: number[];
  finishReason: FinishReason | null;
  stop: StopDetail | null;
  usage: { promptTokens: number; completionTokens: number } | null;
}

/** Most entries a trace's top lists may hold. */
export const MAX_TRACE_TOP = 100;

const utf8 = new TextDecoder('utf-8', { fatal: false });

/** Text of one token (UTF-8, lossy for a partial character). */
export function pieceOf(tokenizer: Tokenizer, id: number): string {
  return utf8.decode(tokenizer.tokenBytes(id));
}

/** The `k` best live entries of `c` (logit descending, ties → lower id), without reordering `c`. */
function bestIndices(c: Candidates, k: number): number[] {
  const best: number[] = [];
  const { ids, logits } = c;
  for (let i = 0; i < c.size; i++) {
    const l = logits[i]!;
    if (l === -Infinity) continue;
    if (best.length === k) {
      const w = best[k - 1]!;
      if (l < logits[w]! || (l === logits[w]! && ids[i]! > ids[w]!)) continue;
    }
    let j = best.length;
    while (j > 0 && (logits[best[j - 1]!]! < l || (logits[best[j - 1]!]! === l && ids[best[j - 1]!]! > ids[i]!))) j--;
    best.splice(j, 0, i);
    if (best.length > k) best.pop();
  }
  return best;
}

/** Collects TraceSteps; pass it as generate()'s `trace` option, or use traceGeneration(). */
export class Tracer implements GenerationTracer {
  readonly steps: TraceStep[] = [];
  prefillInfo: Trace['prefill'] = { ms: 0, cacheLength: 0, cacheBytes: 0 };
  promptTokens: number[] = [];
  private scratch: Candidates | null = null;
  /** keptMark[id] === keptStamp ⇔ id is live in the sampled distribution of the current step. */
  private keptMark = new Uint32Array(0);
  private keptStamp = 0;
  /** Last step of each sequence, waiting for its forward pass. */
  private readonly pending = new Map<number, TraceStep>();

  constructor(readonly tokenizer: Tokenizer, readonly top = 10) {
    if (!Number.isSafeInteger(top) || top < 1 || top > MAX_TRACE_TOP) throw new InvalidOptionError(`trace top must be an integer in [1, ${MAX_TRACE_TOP}], got ${String(top)}`);
  }

  prefill(info: { promptTokens: readonly number[]; ms: number; cacheLength: number; cacheBytes: number }): void {
    this.promptTokens = [...info.promptTokens];
    this.prefillInfo = { ms: info.ms, cacheLength: info.cacheLength, cacheBytes: info.cacheBytes };
  }

  step(s: TraceStepInfo): void {
    const t0 = performance.now();
    const tok = this.tokenizer;
    const vocab = s.logits.length;
    const fin = s.candidates;
    if (this.keptMark.length < vocab) { this.keptMark = new Uint32Array(vocab); this.keptStamp = 0; }
    const mark = ++this.keptStamp;
    for (let i = 0; i < fin.size; i++) if (fin.logits[i]! !== -Infinity) this.keptMark[fin.ids[i]!] = mark;
    const entry = (c: Candidates, i: number, lse: number): TraceCandidate => {
      const id = c.ids[i]!, logit = c.logits[i]!;
      return { id, piece: pieceOf(tok, id), logit, prob: Math.exp(logit - lse), kept: this.keptMark[id] === mark };
    };
    if (this.scratch === null || this.scratch.ids.length < vocab) this.scratch = createCandidates(vocab);
    const c = fillCandidates(this.scratch, s.logits);
    const rawLse = logSumExp(s.logits);
    const rawTop = bestIndices(c, this.top).map((i) => entry(c, i, rawLse));
    let rawRank = 0;
    const chosenLogit = s.logits[s.id]!;
    for (let i = 0; i < vocab; i++) {
      const l = s.logits[i]!;
      if (l > chosenLogit || (l === chosenLogit && i < s.id)) rawRank++;
    }
    const stage = (name: string, params: Readonly<Record<string, ParamValue>>): TraceStage => {
      const lse = logSumExp(c.logits, c.size);
      let size = 0;
      for (let i = 0; i < c.size; i++) if (c.logits[i]! !== -Infinity) size++;
      return { name, params: { ...params }, size, top: bestIndices(c, this.top).map((i) => entry(c, i, lse)) };
    };
    const stages: TraceStage[] = [stage('input', {})];
    for (const p of s.chain.processors) {
      p.apply(c, s.ctx);
      stages.push(stage(p.name, p.params ?? {}));
    }
    // The distribution the sampler drew from: the loop's own processed candidates.
    const finLse = logSumExp(fin.logits, fin.size);
    let processedProb = 0;
    for (let i = 0; i < fin.size; i++) if (fin.ids[i] === s.id) { processedProb = Math.exp(fin.logits[i]! - finLse); break; }
    const step: TraceStep = {
      sequence: s.sequence,
      index: s.index,
      position: s.cacheLength,
      chosen: { id: s.id, piece: pieceOf(tok, s.id), logprob: s.logprob, prob: Math.exp(s.logprob), processedProb, rawRank },
      raw: { vocab, logSumExp: rawLse, maxLogit: rawTop[0]?.logit ?? -Infinity, top: rawTop },
      stages,
      sampler: s.chain.sampler.name,
      cache: { before: { length: s.cacheLength, bytes: s.cacheBytes }, after: null },
      timings: { selectMs: s.selectMs, forwardMs: null, traceMs: 0 },
    };
    step.timings.traceMs = performance.now() - t0;
    this.steps.push(step);
    this.pending.set(s.sequence, step);
  }

  forward(info: { sequence: number; index: number; ms: number; cacheLength: number; cacheBytes: number }): void {
    const step = this.pending.get(info.sequence);
    if (step === undefined || step.index !== info.index) return;
    step.cache.after = { length: info.cacheLength, bytes: info.cacheBytes };
    step.timings.forwardMs = info.ms;
    this.pending.delete(info.sequence);
  }
}

/** Options of traceGeneration: generate()'s (beam search excluded) plus the size of the top lists. */
export type TraceOptions = Omit<GenerateOptions, 'trace'> & { top?: number };

/** Runs generate() with a Tracer and returns the whole trace (steps, result, chain). */
export async function traceGeneration(lm: LanguageModel, prompt: string | readonly number[], options: TraceOptions = {}): Promise<Trace> {
  const { top, ...genOptions } = options;
  const tracer = new Tracer(lm.tokenizer, top ?? 10);
  const trace: Trace = {
    prompt: { tokens: [], pieces: [] }, prefill: tracer.prefillInfo, steps: tracer.steps, top: tracer.top,
    chain: null, text: '', tokens: [], finishReason: null, stop: null, usage: null,
  };
  for await (const ev of generate(lm, prompt, { ...genOptions, trace: tracer })) {
    if (ev.type !== 'done') continue;
    trace.chain = ev.chain;
    trace.text = ev.text;
    trace.tokens = ev.tokens;
    trace.finishReason = ev.finishReason;
    trace.stop = ev.stop;
    trace.usage = { promptTokens: ev.usage.promptTokens, completionTokens: ev.usage.completionTokens };
  }
  trace.prefill = tracer.prefillInfo;
  trace.prompt = { tokens: tracer.promptTokens, pieces: tracer.promptTokens.map((id) => pieceOf(lm.tokenizer, id)) };
  return trace;
}

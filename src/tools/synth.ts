/**
 * `synth`: write a Llama-architecture GGUF with seeded random weights and a real vocabulary, so
 * benchmarks run on realistic shapes (llama2.c's 15M: dim 288, 6 layers, 6 heads, hidden 768;
 * 110M: dim 768, 12 layers, 12 heads, hidden 2048) without downloads.
 *
 * Weights: every matrix N(0, 1/nIn) (so each projection keeps unit variance and activations stay
 * sane), norm weights 1. Values come from one seeded stream per tensor (xoshiro128** via
 * createRng, Box–Muller), generated in f32 and then converted like `quantize` converts them, so a
 * synthesized Q8_0 file equals `quantize` applied to the F32 file of the same seed.
 * Metadata and tensor names/shapes are those llama.cpp's `llama` architecture loads
 * (llama-arch.cpp, llama-model.cpp); all `tokenizer.*` entries are copied from a vocabulary GGUF.
 */
import { InvalidOptionError, ModelFormatError } from '../errors.js';
import { GGMLType } from '../format/dtypes.js';
import { GGUFValueType as V } from '../format/gguf.js';
import { writeGGUF, type GGUFTypeSpec, type GGUFWriterTensor } from '../format/gguf-writer.js';
import type { MetaValue } from '../format/model-file.js';
import { createRng, type Rng } from '../decode/rng.js';
import { parseFileType, targetType, type FileTypeSpec } from './file-type.js';
import { openGGUFSource } from './gguf-source.js';
import { withFileType, convertTensor } from './quantize.js';

export interface SynthOptions {
  dim: number;
  layers: number;
  heads: number;
  kvHeads?: number;
  hidden: number;
  /** File type name (F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q6_K). Default F32. */
  type?: string;
  seed?: number;
  /** llama.context_length. Default 2048. */
  ctx?: number;
  /** A GGUF whose tokenizer.* metadata is copied (e.g. llama.cpp's ggml-vocab-llama-spm.gguf). */
  vocabFile: string;
  /** Write a separate output.weight (default: the classifier shares token_embd, as llama2.c's models). */
  untied?: boolean;
  /** RMSNorm epsilon. Default 1e-5. */
  rmsEps?: number;
  /** general.name. */
  name?: string;
}

export interface SynthResult {
  fileType: FileTypeSpec;
  bytes: number;
  nVocab: number;
  /** Number of weights. */
  params: number;
}

/** The tensors of a llama model, in the order we write them: name and GGUF dims (innermost first). */
export function llamaTensorShapes(o: { dim: number; layers: number; heads: number; kvHeads: number; hidden: number; nVocab: number; untied: boolean }): { name: string; dims: number[] }[] {
  const kvDim = (o.dim / o.heads) * o.kvHeads;
  const out = [{ name: 'token_embd.weight', dims: [o.dim, o.nVocab] }, { name: 'output_norm.weight', dims: [o.dim] }];
  if (o.untied) out.push({ name: 'output.weight', dims: [o.dim, o.nVocab] });
  for (let l = 0; l < o.layers; l++) {
    const p = `blk.${l}.`;
    out.push(
      { name: p + 'attn_norm.weight', dims: [o.dim] },
      { name: p + 'attn_q.weight', dims: [o.dim, o.dim] },
      { name: p + 'attn_k.weight', dims: [o.dim, kvDim] },
      { name: p + 'attn_v.weight', dims: [o.dim, kvDim] },
      { name: p + 'attn_output.weight', dims: [o.dim, o.dim] },
      { name: p + 'ffn_norm.weight', dims: [o.dim] },
      { name: p + 'ffn_gate.weight', dims: [o.dim, o.hidden] },
      { name: p + 'ffn_down.weight', dims: [o.hidden, o.dim] },
      { name: p + 'ffn_up.weight', dims: [o.dim, o.hidden] },
    );
  }
  return out;
}

function positiveInt(v: number | undefined, what: string): number {
  if (v === undefined || !Number.isInteger(v) || v < 1 || v > 1 << 20) throw new InvalidOptionError(`${what} must be a positive integer, got ${String(v)}`);
  return v;
}

/** Fill `out` with N(0, std²) values (Box–Muller: two uniforms give two normals). */
function fillNormal(rng: Rng, out: Float32Array, std: number): void {
  for (let i = 0; i < out.length; i += 2) {
    const u1 = 1 - rng.next(); // (0, 1]: log stays finite
    const u2 = rng.next();
    const r = std * Math.sqrt(-2 * Math.log(u1));
    out[i] = r * Math.cos(2 * Math.PI * u2);
    if (i + 1 < out.length) out[i + 1] = r * Math.sin(2 * Math.PI * u2);
  }
}

/** Read the tokenizer.* entries (with their value types) of a vocabulary GGUF. */
function readVocab(path: string): { meta: [string, MetaValue][]; types: Map<string, GGUFTypeSpec>; nVocab: number } {
  const src = openGGUFSource(path);
  try {
    const meta = [...src.meta].filter(([k]) => k.startsWith('tokenizer.'));
    const tokens = src.meta.get('tokenizer.ggml.tokens');
    if (!Array.isArray(tokens) || tokens.length === 0) throw new ModelFormatError(`${path}: no tokenizer.ggml.tokens array: not a vocabulary file`);
    return { meta, types: new Map(meta.map(([k]) => [k, src.metaTypes.get(k)!])), nVocab: tokens.length };
  } finally {
    src.close();
  }
}

/** Write a synthetic llama GGUF to `outPath`. */
export function synthFile(outPath: string, o: SynthOptions): SynthResult {
  const dim = positiveInt(o.dim, '--dim');
  const layers = positiveInt(o.layers, '--layers');
  const heads = positiveInt(o.heads, '--heads');
  const kvHeads = positiveInt(o.kvHeads ?? heads, '--kv-heads');
  const hidden = positiveInt(o.hidden, '--hidden');
  const ctx = positiveInt(o.ctx ?? 2048, '--ctx');
  const seed = o.seed ?? 1;
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) throw new InvalidOptionError(`--seed must be an integer in 0..4294967295, got ${seed}`);
  if (dim % heads !== 0) throw new InvalidOptionError(`--dim ${dim} is not a multiple of --heads ${heads}`);
  if (heads % kvHeads !== 0) throw new InvalidOptionError(`--heads ${heads} is not a multiple of --kv-heads ${kvHeads}`);
  const headDim = dim / heads;
  if (headDim % 2 !== 0) throw new InvalidOptionError(`head size ${headDim} (dim/heads) must be even for RoPE`);
  const spec = parseFileType(o.type ?? 'F32');
  const vocab = readVocab(o.vocabFile);
  const untied = o.untied ?? false;
  const shapes = llamaTensorShapes({ dim, layers, heads, kvHeads, hidden, nVocab: vocab.nVocab, untied });

  const u32 = { type: V.UINT32 }, f32 = { type: V.FLOAT32 }, str = { type: V.STRING };
  const base: [string, MetaValue, GGUFTypeSpec][] = [
    ['general.architecture', 'llama', str],
    ['general.name', o.name ?? `tokenloop-synth-${dim}x${layers}`, str],
    ['llama.vocab_size', vocab.nVocab, u32],
    ['llama.context_length', ctx, u32],
    ['llama.embedding_length', dim, u32],
    ['llama.block_count', layers, u32],
    ['llama.feed_forward_length', hidden, u32],
    ['llama.rope.dimension_count', headDim, u32],
    ['llama.attention.head_count', heads, u32],
    ['llama.attention.head_count_kv', kvHeads, u32],
    ['llama.attention.layer_norm_rms_epsilon', o.rmsEps ?? 1e-5, f32],
    ['llama.rope.freq_base', 10000, f32],
    ['tokenloop.synth.seed', seed, u32],
  ];
  const metaIn = new Map<string, MetaValue>([...base.map(([k, v]) => [k, v] as const), ...vocab.meta]);
  const typesIn = new Map<string, GGUFTypeSpec>([...base.map(([k, , t]) => [k, t] as const), ...vocab.types]);
  const { meta, metaTypes } = withFileType(metaIn, typesIn, spec);

  const rng = createRng(seed);
  let params = 0;
  const tensors: GGUFWriterTensor[] = shapes.map(({ name, dims }) => {
    const tensorRng = rng.split(); // one stream per tensor, drawn in file order
    const n = dims.reduce((a, b) => a * b, 1);
    params += n;
    const to = targetType(spec, name, dims, untied) ?? GGMLType.F32;
    const std = 1 / Math.sqrt(dims[0]!);
    const isNorm = dims.length === 1;
    // Rows are produced in order as the converter asks for them, so each tensor's values do not
    // depend on the slice size.
    const read = (_offset: number, length: number): Uint8Array => {
      const v = new Float32Array(length / 4);
      if (isNorm) v.fill(1); else fillNormal(tensorRng, v, std);
      return new Uint8Array(v.buffer);
    };
    return { name, dims, type: to, data: convertTensor({ dims }, GGMLType.F32, to, read) };
  });
  const bytes = writeGGUF(outPath, { meta, metaTypes, tensors });
  return { fileType: spec, bytes, nVocab: vocab.nVocab, params };
}

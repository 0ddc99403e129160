/**
 * llama2.c checkpoint reader (the "legacy" run.c format).
 * Header: seven int32 — dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len.
 * A negative vocab_size means the classifier is stored separately (not shared with the embedding).
 * Then f32 weights in this order: token embedding (vocab, dim), attention RMSNorm (L, dim),
 * wq (L, dim, dim), wk (L, kv_dim, dim), wv (L, kv_dim, dim), wo (L, dim, dim), FFN RMSNorm (L, dim),
 * w1 (L, hidden, dim), w2 (L, dim, hidden), w3 (L, hidden, dim), final RMSNorm (dim),
 * freq_cis real and imag (seq_len, head_size/2 each; unused), [classifier (vocab, dim)].
 *
 * The weights are exposed under GGUF tensor names and `llama.*` metadata so the rest of the
 * engine sees one model description. Each per-layer tensor is a view into the file buffer.
 */
import { ModelFormatError } from '../errors.js';
import { GGMLType } from './dtypes.js';
import type { MetaValue, TensorInfo } from './model-file.js';

export const LLAMA2C_HEADER_BYTES = 28;

export interface Llama2cParsed {
  meta: Map<string, MetaValue>;
  tensors: Map<string, TensorInfo>;
  sharedClassifier: boolean;
}

export function parseLlama2c(bytes: Uint8Array, what = 'llama2.c checkpoint'): Llama2cParsed {
  if (bytes.byteLength < LLAMA2C_HEADER_BYTES) throw new ModelFormatError(`${what}: file is truncated (${bytes.byteLength} bytes, the header alone needs ${LLAMA2C_HEADER_BYTES})`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, LLAMA2C_HEADER_BYTES);
  const h = Array.from({ length: 7 }, (_, i) => view.getInt32(i * 4, true));
  const [dim, hidden, nLayers, nHeads, nKvHeads, vocabSigned, seqLen] = h as [number, number, number, number, number, number, number];
  const vocab = Math.abs(vocabSigned);
  const sharedClassifier = vocabSigned > 0;
  const bad = (field: string, v: number) => new ModelFormatError(`${what}: corrupt header: ${field} = ${v}`);
  if (dim <= 0 || dim > 1 << 16) throw bad('dim', dim);
  if (hidden <= 0 || hidden > 1 << 18) throw bad('hidden_dim', hidden);
  if (nLayers <= 0 || nLayers > 1024) throw bad('n_layers', nLayers);
  if (nHeads <= 0 || dim % nHeads !== 0) throw bad('n_heads', nHeads);
  if (nKvHeads <= 0 || nHeads % nKvHeads !== 0) throw bad('n_kv_heads', nKvHeads);
  if (vocab === 0 || vocab > 1 << 22) throw bad('vocab_size', vocabSigned);
  if (seqLen <= 0 || seqLen > 1 << 22) throw bad('seq_len', seqLen);
  const headSize = dim / nHeads;
  if (headSize % 2 !== 0) throw bad('head size', headSize);
  const kvDim = nKvHeads * headSize;

  const tensors = new Map<string, TensorInfo>();
  let off = LLAMA2C_HEADER_BYTES;
  const total = (n: number) => n * 4;
  const expected = LLAMA2C_HEADER_BYTES + 4 * (
    vocab * dim + nLayers * (2 * dim + 2 * dim * dim + 2 * kvDim * dim + 3 * hidden * dim) + dim +
    seqLen * headSize + (sharedClassifier ? 0 : vocab * dim));
  if (bytes.byteLength < expected) {
    throw new ModelFormatError(`${what}: file is truncated: the header (dim ${dim}, layers ${nLayers}, vocab ${vocab}) needs ${expected} bytes but the file has ${bytes.byteLength}`);
  }
  const take = (name: string, dims: number[]) => {
    const n = dims.reduce((a, b) => a * b, 1);
    const byteLength = total(n);
    tensors.set(name, { name, dims, type: GGMLType.F32, offset: off, byteLength, data: bytes.subarray(off, off + byteLength) });
    off += byteLength;
  };
  // Stacked per-layer arrays are split into one view per layer.
  const perLayer = (suffix: string, dims: number[]) => {
    for (let l = 0; l < nLayers; l++) take(`blk.${l}.${suffix}`, dims);
  };
  take('token_embd.weight', [dim, vocab]);
  perLayer('attn_norm.weight', [dim]);
  perLayer('attn_q.weight', [dim, dim]);
  perLayer('attn_k.weight', [dim, kvDim]);
  perLayer('attn_v.weight', [dim, kvDim]);
  perLayer('attn_output.weight', [dim, dim]);
  perLayer('ffn_norm.weight', [dim]);
  perLayer('ffn_gate.weight', [dim, hidden]);
  perLayer('ffn_down.weight', [hidden, dim]);
  perLayer('ffn_up.weight', [dim, hidden]);
  take('output_norm.weight', [dim]);
  off += total(seqLen * headSize); // freq_cis real + imag (seq_len × head_size/2 each): unused
  if (!sharedClassifier) take('output.weight', [dim, vocab]);

  const meta = new Map<string, MetaValue>([
    ['general.architecture', 'llama'],
    ['general.name', 'llama2.c checkpoint'],
    ['llama.context_length', seqLen],
    ['llama.embedding_length', dim],
    ['llama.block_count', nLayers],
    ['llama.feed_forward_length', hidden],
    ['llama.attention.head_count', nHeads],
    ['llama.attention.head_count_kv', nKvHeads],
    ['llama.rope.dimension_count', headSize],
    ['llama.rope.freq_base', 10000],
    ['llama.attention.layer_norm_rms_epsilon', 1e-5],
    ['llama.vocab_size', vocab],
    // llama2.c models are trained with BOS at the start of every story and end one by emitting BOS.
    ['tokenloop.llama2c.bos_ends_sequence', true],
  ]);
  return { meta, tensors, sharedClassifier };
}

/**
 * Target file types of `quantize`/`synth` and llama.cpp's rules for which tensor gets which type
 * (llama-quant.cpp: `llama_model_quantize_impl`, `llama_tensor_get_type`).
 */
import { InvalidOptionError } from '../errors.js';
import { blockLayout, GGMLType } from '../format/dtypes.js';

export interface FileTypeSpec {
  /** Name as given on the command line (llama-quantize spells them the same). */
  name: string;
  /** Type of the 2-D weight matrices. */
  type: GGMLType;
  /** `general.file_type` value (llama.h `enum llama_ftype`). */
  ftype: number;
}

/**
 * Supported targets. LLAMA_FTYPE_ALL_F32 = 0, MOSTLY_F16 = 1, MOSTLY_Q4_0 = 2, MOSTLY_Q8_0 = 7,
 * MOSTLY_Q4_K_S = 14, MOSTLY_Q6_K = 18, MOSTLY_BF16 = 32. Our Q4_K is llama-quantize's Q4_K_S
 * without its per-layer upgrades (every matrix Q4_K, the classifier Q6_K).
 */
export const FILE_TYPES: readonly FileTypeSpec[] = [
  { name: 'F32', type: GGMLType.F32, ftype: 0 },
  { name: 'F16', type: GGMLType.F16, ftype: 1 },
  { name: 'BF16', type: GGMLType.BF16, ftype: 32 },
  { name: 'Q8_0', type: GGMLType.Q8_0, ftype: 7 },
  { name: 'Q4_0', type: GGMLType.Q4_0, ftype: 2 },
  { name: 'Q4_K', type: GGMLType.Q4_K, ftype: 14 },
  { name: 'Q6_K', type: GGMLType.Q6_K, ftype: 18 },
];

/** `general.quantization_version` written by llama-quantize (ggml.h GGML_QNT_VERSION). */
export const QUANTIZATION_VERSION = 2;

/** Look up a target by name (case-insensitive); throws InvalidOptionError naming the choices. */
export function parseFileType(name: string): FileTypeSpec {
  const spec = FILE_TYPES.find((f) => f.name.toLowerCase() === name.trim().toLowerCase());
  if (!spec) throw new InvalidOptionError(`unknown type "${name}"; supported: ${FILE_TYPES.map((f) => f.name).join(', ')}`);
  return spec;
}

const isQuantized = (t: GGMLType) => blockLayout(t).blockElems > 1;

/** llama.cpp's replacement for a K-quant type on rows that are not whole super-blocks (llama-quant.cpp). */
const K_FALLBACK = new Map<GGMLType, GGMLType>([[GGMLType.Q4_K, GGMLType.Q5_0], [GGMLType.Q6_K, GGMLType.Q8_0]]);

/**
 * Whether llama-quantize converts this tensor at all: weight matrices (2+ dims, name ending in
 * "weight") except norms and the few small tensors llama.cpp keeps exact (MoE router, position
 * and token-type embeddings, relative positions, SSM convolution/A/D).
 */
export function isConvertible(name: string, dims: readonly number[]): boolean {
  if (!name.endsWith('weight') || dims.filter((d) => d > 1).length < 2) return false;
  return !/_norm\.weight$|ffn_gate_inp\.weight$|pos_embd|token_types|rel_pos|ssm_conv1d|ssm_a$|ssm_d$/.test(name);
}

/**
 * The type a tensor gets in a file of type `spec`. `hasOutput`: the model has its own
 * `output.weight` (otherwise token_embd.weight doubles as the classifier).
 *
 * - Tensors llama.cpp does not convert keep their type (`null` is returned).
 * - In quantized files the classifier gets Q6_K in K-quant files (as llama.cpp does) and Q8_0 in
 *   Q8_0/Q4_0 files (llama.cpp gives Q4_0 files a Q6_K classifier; we keep Q8_0 there, which is
 *   llama.cpp's own fallback for Q6_K, so these files and their benchmarks stay as they were).
 *   `pure` (llama-quantize --pure) gives every matrix the file's type instead.
 * - A K-quant matrix whose rows are not whole 256-value super-blocks falls back as llama.cpp's
 *   does: Q4_K → Q5_0, Q6_K → Q8_0.
 * - A matrix whose rows are not whole blocks of the chosen type keeps its type (`null`).
 */
export function targetType(spec: FileTypeSpec, name: string, dims: readonly number[], hasOutput: boolean, pure = false): GGMLType | null {
  if (!isConvertible(name, dims)) return null;
  let t = spec.type;
  const isClassifier = name === 'output.weight' || (!hasOutput && name === 'token_embd.weight');
  if (!pure && isQuantized(t) && isClassifier) t = blockLayout(t).blockElems === 256 ? GGMLType.Q6_K : GGMLType.Q8_0;
  if (dims[0]! % blockLayout(t).blockElems !== 0 && K_FALLBACK.has(t)) t = K_FALLBACK.get(t)!;
  if (dims[0]! % blockLayout(t).blockElems !== 0) return null;
  return t;
}

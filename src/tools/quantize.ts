/**
 * `quantize`: rewrite a GGUF model with its weight matrices in another type (F32, F16, BF16,
 * Q8_0, Q4_0, Q4_K, Q6_K), keeping every metadata entry (with its value type) and every other tensor, the way
 * llama-quantize does (see ./file-type.ts for which tensor gets which type). Tensors are read,
 * converted and written a slice of rows at a time.
 */
import { resolve } from 'node:path';
import { InvalidOptionError, ModelFormatError, UnsupportedError } from '../errors.js';
import { blockLayout, byteSize, GGMLType, typeName } from '../format/dtypes.js';
import { GGUFValueType } from '../format/gguf.js';
import { writeGGUF, type GGUFTypeSpec, type GGUFWriterTensor } from '../format/gguf-writer.js';
import type { MetaValue, TensorInfo } from '../format/model-file.js';
import { parseFileType, QUANTIZATION_VERSION, targetType, type FileTypeSpec } from './file-type.js';
import { openGGUFSource } from './gguf-source.js';
import { decodeValues, encodeValues } from './tensor-codec.js';

export interface QuantizeOptions {
  /** Give every matrix the file's type (llama-quantize --pure): no Q8_0 classifier in Q4_0 files. */
  pure?: boolean;
  /** Called once per tensor, after it is planned. */
  onTensor?: (info: { name: string; dims: readonly number[]; from: GGMLType; to: GGMLType }) => void;
}

export interface QuantizeResult {
  fileType: FileTypeSpec;
  inputBytes: number;
  outputBytes: number;
  /** Tensors per output type name. */
  counts: Record<string, number>;
}

/** Source types that can be converted; quantized inputs are copied only when the type stays. */
const FLOAT_TYPES = new Set([GGMLType.F32, GGMLType.F16, GGMLType.BF16]);

/** Rows per slice: about 4 MiB of f32 values. */
function rowsPerSlice(rowLen: number): number {
  return Math.max(1, Math.floor((1 << 20) / rowLen));
}

/**
 * Chunks of `t` converted from `from` to `to`, reading `read(offset, length)` a slice of rows at
 * a time. Exported for `synth`, which produces its rows in memory.
 */
export function* convertTensor(t: Pick<TensorInfo, 'dims'> & { name?: string }, from: GGMLType, to: GGMLType, read: (offset: number, length: number) => Uint8Array): Generator<Uint8Array> {
  const rowLen = t.dims[0]!;
  const nRows = t.dims.slice(1).reduce((a, b) => a * b, 1);
  const rowBytes = byteSize(from, rowLen);
  const step = rowsPerSlice(rowLen);
  // a block-quantized type has no encoding for NaN or ±Inf (ggml's quantizers abort on them):
  // refuse the tensor instead of writing scales that decode to garbage
  const blocks = blockLayout(to).blockElems > 1;
  for (let r = 0; r < nRows; r += step) {
    const n = Math.min(step, nRows - r);
    const bytes = read(r * rowBytes, n * rowBytes);
    if (from === to) { yield bytes; continue; }
    const values = decodeValues(from, bytes, n * rowLen);
    if (blocks) {
      const i = firstNonFinite(values);
      if (i >= 0) {
        const at = r * rowLen + i;
        throw new ModelFormatError(`tensor${t.name ? ` "${t.name}"` : ''} holds ${values[i]} at element ${at} (row ${Math.floor(at / rowLen)}): ${typeName(to)} cannot encode it`);
      }
    }
    yield encodeValues(to, values);
  }
}

/** Index of the first NaN or ±Infinity in x, or −1. */
function firstNonFinite(x: Float32Array): number {
  for (let i = 0; i < x.length; i++) { const v = x[i]!; if (v - v !== 0) return i; }
  return -1;
}

/** Quantize/convert the GGUF model at `inPath` into `outPath` with file type `typeName` (e.g. "Q8_0"). */
export function quantizeFile(inPath: string, outPath: string, type: string, opts: QuantizeOptions = {}): QuantizeResult {
  const spec = parseFileType(type);
  if (resolve(inPath) === resolve(outPath)) throw new InvalidOptionError(`output file must differ from the input file (${inPath})`);
  const src = openGGUFSource(inPath);
  try {
    const hasOutput = src.tensors.has('output.weight');
    const counts: Record<string, number> = {};
    const tensors: GGUFWriterTensor[] = [];
    for (const t of src.tensors.values()) {
      const to = targetType(spec, t.name, t.dims, hasOutput, opts.pure) ?? t.type;
      if (to !== t.type && !FLOAT_TYPES.has(t.type)) {
        throw new UnsupportedError(`${inPath}: tensor "${t.name}" is already quantized (${typeName(t.type)}); converting it to ${typeName(to)} is not supported, start from an F32, F16 or BF16 model`);
      }
      if (blockLayout(to).blockElems > 1 && t.dims[0]! % blockLayout(to).blockElems !== 0) {
        throw new Error(`internal: ${t.name} planned as ${typeName(to)} with row length ${t.dims[0]}`);
      }
      counts[typeName(to)] = (counts[typeName(to)] ?? 0) + 1;
      opts.onTensor?.({ name: t.name, dims: t.dims, from: t.type, to });
      const base = t.offset;
      tensors.push({
        name: t.name, dims: t.dims, type: to,
        data: convertTensor(t, t.type, to, (off, len) => src.read(base + off, len)),
      });
    }
    const { meta, metaTypes } = withFileType(src.meta, src.metaTypes, spec);
    const outputBytes = writeGGUF(outPath, { meta, metaTypes, tensors, alignment: src.alignment });
    return { fileType: spec, inputBytes: src.size, outputBytes, counts };
  } finally {
    src.close();
  }
}

/**
 * The metadata with `general.file_type` and `general.quantization_version` set as llama-quantize
 * sets them (both u32; existing entries keep their place, new ones go last).
 */
export function withFileType(meta: ReadonlyMap<string, MetaValue>, metaTypes: ReadonlyMap<string, GGUFTypeSpec>, spec: FileTypeSpec): { meta: Map<string, MetaValue>; metaTypes: Map<string, GGUFTypeSpec> } {
  const m = new Map(meta);
  const types = new Map(metaTypes);
  m.set('general.quantization_version', QUANTIZATION_VERSION);
  m.set('general.file_type', spec.ftype);
  types.set('general.quantization_version', { type: GGUFValueType.UINT32 });
  types.set('general.file_type', { type: GGUFValueType.UINT32 });
  return { meta: m, metaTypes: types };
}

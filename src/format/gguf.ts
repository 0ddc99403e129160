/**
 * GGUF reader (versions 2 and 3, little-endian).
 * Layout (ggml docs/gguf.md): magic "GGUF", u32 version, u64 tensor_count, u64 kv_count,
 * kv pairs (string key, u32 type, value), tensor infos (string name, u32 n_dims, u64 dims[],
 * u32 type, u64 offset relative to the data section), padding to `general.alignment`
 * (default 32), tensor data.
 */
import { Buffer } from 'node:buffer';
import { ModelFormatError, UnsupportedError } from '../errors.js';
import { byteSize, blockLayout, GGMLType, isKnownType, typeName } from './dtypes.js';
import type { MetaValue, TensorInfo } from './model-file.js';

export const GGUF_MAGIC = 0x46554747; // "GGUF" read as a little-endian u32

export enum GGUFValueType {
  UINT8 = 0, INT8 = 1, UINT16 = 2, INT16 = 3, UINT32 = 4, INT32 = 5, FLOAT32 = 6, BOOL = 7,
  STRING = 8, ARRAY = 9, UINT64 = 10, INT64 = 11, FLOAT64 = 12,
}

export interface GGUFParsed {
  version: number;
  meta: Map<string, MetaValue>;
  /** Value type of every key (arrays: the element type), for writers that round-trip a file. */
  metaTypes: Map<string, { type: GGUFValueType; elemType?: GGUFValueType }>;
  tensors: Map<string, TensorInfo>;
  alignment: number;
  dataOffset: number;
}

/**
 * Bounds-checked little-endian cursor; every overrun becomes a "truncated" error. Reading makes no
 * garbage on the success path (a vocabulary is tens of thousands of strings, each with its length
 * and a context for errors): counts are read as two u32 halves instead of a BigInt, a string is
 * decoded straight from the buffer with no view object, and the context of an error message is
 * only put together when there is an error.
 */
class Cursor {
  pos = 0;
  private readonly view: DataView;
  /** The same bytes as a Buffer, to decode strings from (it keeps a leading U+FEFF, which TextDecoder drops). */
  private readonly buf: Buffer;
  constructor(private readonly bytes: Uint8Array, private readonly what: string) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  private need(n: number, ctx: string, prefix = ''): void {
    if (this.pos + n > this.bytes.byteLength) {
      throw new ModelFormatError(`${this.what}: file is truncated (needed ${n} bytes at offset ${this.pos} while reading ${prefix}${ctx}, file has ${this.bytes.byteLength})`);
    }
  }
  u8(ctx: string): number { this.need(1, ctx); return this.view.getUint8(this.pos++); }
  i8(ctx: string): number { this.need(1, ctx); return this.view.getInt8(this.pos++); }
  u16(ctx: string): number { this.need(2, ctx); const v = this.view.getUint16(this.pos, true); this.pos += 2; return v; }
  i16(ctx: string): number { this.need(2, ctx); const v = this.view.getInt16(this.pos, true); this.pos += 2; return v; }
  u32(ctx: string, prefix = ''): number { this.need(4, ctx, prefix); const v = this.view.getUint32(this.pos, true); this.pos += 4; return v; }
  i32(ctx: string): number { this.need(4, ctx); const v = this.view.getInt32(this.pos, true); this.pos += 4; return v; }
  f32(ctx: string): number { this.need(4, ctx); const v = this.view.getFloat32(this.pos, true); this.pos += 4; return v; }
  f64(ctx: string): number { this.need(8, ctx); const v = this.view.getFloat64(this.pos, true); this.pos += 8; return v; }
  u64big(ctx: string): bigint { this.need(8, ctx); const v = this.view.getBigUint64(this.pos, true); this.pos += 8; return v; }
  i64big(ctx: string): bigint { this.need(8, ctx); const v = this.view.getBigInt64(this.pos, true); this.pos += 8; return v; }
  /** A u64 used as a count or size: must fit in a safe integer (the high half below 2^21). */
  count(ctx: string, prefix = ''): number {
    this.need(8, ctx, prefix);
    const lo = this.view.getUint32(this.pos, true), hi = this.view.getUint32(this.pos + 4, true);
    if (hi >= 0x200000) throw new ModelFormatError(`${this.what}: implausible ${prefix}${ctx} ${(BigInt(hi) << 32n) | BigInt(lo)}`);
    this.pos += 8;
    return hi * 0x100000000 + lo;
  }
  str(ctx: string): string {
    const n = this.count(ctx, 'length of ');
    this.need(n, ctx);
    const s = this.buf.toString('utf8', this.pos, this.pos + n);
    this.pos += n;
    return s;
  }
}

function int64Value(v: bigint): number | bigint {
  return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
}

function readValue(c: Cursor, type: number, ctx: string, depth = 0): MetaValue {
  switch (type) {
    case GGUFValueType.UINT8: return c.u8(ctx);
    case GGUFValueType.INT8: return c.i8(ctx);
    case GGUFValueType.UINT16: return c.u16(ctx);
    case GGUFValueType.INT16: return c.i16(ctx);
    case GGUFValueType.UINT32: return c.u32(ctx);
    case GGUFValueType.INT32: return c.i32(ctx);
    case GGUFValueType.FLOAT32: return c.f32(ctx);
    case GGUFValueType.FLOAT64: return c.f64(ctx);
    case GGUFValueType.UINT64: return int64Value(c.u64big(ctx));
    case GGUFValueType.INT64: return int64Value(c.i64big(ctx));
    case GGUFValueType.BOOL: {
      const b = c.u8(ctx);
      if (b > 1) throw new ModelFormatError(`GGUF: invalid bool value ${b} in ${ctx}`);
      return b === 1;
    }
    case GGUFValueType.STRING: return c.str(ctx);
    case GGUFValueType.ARRAY: {
      if (depth > 8) throw new ModelFormatError(`GGUF: arrays nested too deeply in ${ctx}`);
      const elemType = c.u32(ctx, 'element type of ');
      const n = c.count(ctx, 'element count of ');
      // Each element takes at least one byte, so a count beyond the file size is corrupt.
      if (n > 1 << 30) throw new ModelFormatError(`GGUF: implausible array length ${n} in ${ctx}`);
      const out: MetaValue[] = new Array(n);
      for (let i = 0; i < n; i++) out[i] = readValue(c, elemType, ctx, depth + 1);
      return out;
    }
    default:
      throw new ModelFormatError(`GGUF: unknown metadata value type ${type} in ${ctx}`);
  }
}

/** Parse a GGUF file held entirely in `bytes`. Tensor data are views, not copies. */
export function parseGGUF(bytes: Uint8Array, what = 'GGUF'): GGUFParsed {
  const c = new Cursor(bytes, what);
  const magic = c.u32('magic');
  if (magic !== GGUF_MAGIC) throw new ModelFormatError(`${what}: not a GGUF file (bad magic 0x${magic.toString(16).padStart(8, '0')})`);
  const version = c.u32('version');
  if (version === 1) throw new UnsupportedError(`${what}: GGUF version 1 is not supported (only versions 2 and 3)`);
  if (version !== 2 && version !== 3) {
    const hint = version > 0xffff ? ' (big-endian files are not supported)' : '';
    throw new UnsupportedError(`${what}: unsupported GGUF version ${version}${hint}; supported: 2, 3`);
  }
  const nTensors = c.count('tensor count');
  const nKv = c.count('metadata count');
  if (nTensors > 1e7 || nKv > 1e7) throw new ModelFormatError(`${what}: implausible header (tensors ${nTensors}, metadata ${nKv})`);

  const meta = new Map<string, MetaValue>();
  const metaTypes = new Map<string, { type: GGUFValueType; elemType?: GGUFValueType }>();
  for (let i = 0; i < nKv; i++) {
    const key = c.str(`metadata key #${i}`);
    const type = c.u32(`type of ${key}`);
    let elemType: number | undefined;
    if (type === GGUFValueType.ARRAY) {
      // Peek the element type for round-tripping writers.
      const save = c.pos; elemType = c.u32(`element type of ${key}`); c.pos = save;
    }
    meta.set(key, readValue(c, type, `metadata "${key}"`));
    metaTypes.set(key, elemType === undefined ? { type } : { type, elemType });
  }

  let alignment = 32;
  const a = meta.get('general.alignment');
  if (a !== undefined) {
    if (typeof a !== 'number' || a <= 0 || (a & (a - 1)) !== 0) throw new ModelFormatError(`${what}: general.alignment must be a power of two, got ${String(a)}`);
    alignment = a;
  }

  const infos: { name: string; dims: number[]; type: number; rel: number }[] = [];
  for (let i = 0; i < nTensors; i++) {
    const name = c.str(`tensor name #${i}`);
    const nDims = c.u32(`dimension count of tensor "${name}"`);
    if (nDims < 1 || nDims > 4) throw new ModelFormatError(`${what}: tensor "${name}" has ${nDims} dimensions (expected 1..4)`);
    const dims: number[] = [];
    for (let d = 0; d < nDims; d++) dims.push(c.count(`dimension ${d} of tensor "${name}"`));
    const type = c.u32(`type of tensor "${name}"`);
    const rel = c.count(`offset of tensor "${name}"`);
    infos.push({ name, dims, type, rel });
  }
  const dataOffset = Math.ceil(c.pos / alignment) * alignment;

  const tensors = new Map<string, TensorInfo>();
  for (const t of infos) {
    if (tensors.has(t.name)) throw new ModelFormatError(`${what}: duplicate tensor name "${t.name}"`);
    if (!isKnownType(t.type)) throw new ModelFormatError(`${what}: tensor "${t.name}" has unknown type id ${t.type}`);
    const n = t.dims.reduce((x, y) => x * y, 1);
    const { blockElems } = blockLayout(t.type);
    if (t.dims[0]! % blockElems !== 0) throw new ModelFormatError(`${what}: tensor "${t.name}" row length ${t.dims[0]} is not a multiple of the ${typeName(t.type)} block size ${blockElems}`);
    if (t.rel % alignment !== 0) throw new ModelFormatError(`${what}: tensor "${t.name}" offset ${t.rel} is not aligned to ${alignment}`);
    const byteLength = byteSize(t.type as GGMLType, n);
    const offset = dataOffset + t.rel;
    if (offset + byteLength > bytes.byteLength) {
      throw new ModelFormatError(`${what}: file is truncated: tensor "${t.name}" needs bytes ${offset}..${offset + byteLength} but the file has ${bytes.byteLength}`);
    }
    tensors.set(t.name, { name: t.name, dims: t.dims, type: t.type as GGMLType, offset, byteLength, data: bytes.subarray(offset, offset + byteLength) });
  }
  return { version, meta, metaTypes, tensors, alignment, dataOffset };
}

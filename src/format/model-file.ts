import { GGMLType } from './dtypes.js';

/** A GGUF metadata value. Integer types wider than 2^53 stay as bigint. */
export type MetaValue = number | bigint | boolean | string | MetaValue[];

/** One tensor as stored in the file. `data` is a view into the file bytes, never a copy. */
export interface TensorInfo {
  name: string;
  /** Dimensions innermost first (GGUF order): a matrix {nIn, nOut} is nOut rows of nIn values. */
  dims: number[];
  type: GGMLType;
  /** Absolute byte offset in the file. */
  offset: number;
  byteLength: number;
  data: Uint8Array;
}

/** A parsed model file: metadata plus tensor views over one buffer holding the whole file. */
export interface ModelFile {
  kind: 'gguf' | 'llama2c';
  path: string;
  /** GGUF version (2 or 3); 0 for llama2c. */
  version: number;
  meta: ReadonlyMap<string, MetaValue>;
  tensors: ReadonlyMap<string, TensorInfo>;
  /** File size in bytes. */
  bytes: number;
  /** The file contents (tensor `data` arrays are views into it). */
  buffer: Uint8Array;
  loadMs: number;
}

/** Number of elements of a tensor. */
export function tensorElements(t: Pick<TensorInfo, 'dims'>): number {
  return t.dims.reduce((a, b) => a * b, 1);
}

/**
 * Tensor lookup for family loaders: by GGUF name, shape-checked against the hyperparameters, typed
 * as a kernel Weight (a view, never a copy of a large tensor).
 */
import { ModelFormatError } from '../errors.js';
import type { ModelFile } from '../format/model-file.js';
import { toF32 } from './kernels/row.js';
import { weightFromTensor, type Weight } from './kernels/weight.js';
import type { NormWeights } from './spec.js';

/** Tensors of one file for architecture `arch`; counts bytes of the weights taken. */
export class TensorSource {
  bytes = 0;
  private readonly taken = new Set<string>();
  constructor(readonly file: ModelFile, readonly arch: string) {}

  has(name: string): boolean { return this.file.tensors.has(name); }

  /** The file's tensors that no need/opt/vec/norm call has taken, in file order. */
  untaken(): string[] { return [...this.file.tensors.keys()].filter((n) => !this.taken.has(n)); }

  /** A required tensor of exactly `dims` (innermost first). */
  need(name: string, dims: number[], why = ''): Weight {
    const w = this.opt(name, dims, why);
    if (!w) throw new ModelFormatError(`${this.arch}: missing tensor ${name}`);
    return w;
  }

  /** An optional tensor; when present it must have exactly `dims`. */
  opt(name: string, dims: number[], why = ''): Weight | null {
    const t = this.file.tensors.get(name);
    if (!t) return null;
    if (t.dims.length !== dims.length || t.dims.some((d, i) => d !== dims[i])) {
      throw new ModelFormatError(`${this.arch}: tensor ${name} has shape [${t.dims.join(', ')}], expected [${dims.join(', ')}]${why ? ` (${why})` : ''}`);
    }
    const w = weightFromTensor(t);
    if (!this.taken.has(name)) { this.taken.add(name); this.bytes += t.byteLength; }
    return w;
  }

  /** A vector as f32 (norm weights, biases). */
  vec(name: string, n: number, required: boolean, why = ''): Float32Array | null {
    const w = required ? this.need(name, [n], why) : this.opt(name, [n], why);
    return w ? toF32(w) : null;
  }

  /** Norm weight (+ bias when `withBias`) named `<prefix>.weight` / `<prefix>.bias`. */
  norm(prefix: string, n: number, required: boolean, withBias = false): NormWeights | null {
    const w = this.vec(`${prefix}.weight`, n, required);
    if (!w) return null;
    const b = this.vec(`${prefix}.bias`, n, withBias === true && required);
    return { w, b };
  }
}

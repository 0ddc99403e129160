/**
 * What a family module exports: the `general.architecture` names it serves and a builder from a
 * model file to the shared TransformerSpec.
 */
import type { ModelFile } from '../format/model-file.js';
import type { SpecOptions } from './standard.js';
import type { TransformerSpec } from './spec.js';

export interface Family {
  architectures: string[];
  build(file: ModelFile, arch: string, opts: SpecOptions): { spec: TransformerSpec; bytes: number };
}

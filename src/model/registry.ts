/**
 * Architecture registry: `general.architecture` → family module → a runnable Model.
 * Adding a family is one file in families/ and one entry here.
 */
import { ModelFormatError, UnsupportedError } from '../errors.js';
import type { ModelFile } from '../format/model-file.js';
import type { Family } from './family.js';
import { llama } from './families/llama.js';
import type { Model } from './model.js';
import type { SpecOptions } from './standard.js';
import { TransformerModel } from './transformer.js';

const FAMILIES: Family[] = [llama];

/** Options for loadModel. */
export type LoadModelOptions = SpecOptions;

/** Architectures loadModel accepts. */
export function supportedArchitectures(): string[] {
  return FAMILIES.flatMap((f) => f.architectures).sort();
}

/** Build a runnable model from a parsed file (weights stay views into the file buffer). */
export function loadModel(file: ModelFile, opts: LoadModelOptions = {}): Model {
  const arch = file.meta.get('general.architecture');
  if (arch === undefined) throw new ModelFormatError(`${file.path}: missing required metadata key general.architecture`);
  if (typeof arch !== 'string') throw new ModelFormatError(`${file.path}: general.architecture is not a string`);
  const fam = FAMILIES.find((f) => f.architectures.includes(arch));
  if (!fam) throw new UnsupportedError(`unsupported architecture "${arch}" (supported: ${supportedArchitectures().join(', ')})`);
  const { spec, bytes } = fam.build(file, arch, opts);
  return new TransformerModel(spec, bytes);
}

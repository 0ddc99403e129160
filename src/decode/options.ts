/**
 * The ONE place where user sampling options become a chain. Every option is validated here
 * (InvalidOptionError naming the option and its allowed range); unknown keys are rejected, never
 * ignored; controls at their neutral value are left out so `describe()` reports what really runs.
 *
 * Default order (llama.cpp's, `common/sampling`): penalties → logit bias → no-repeat-n-gram →
 * user processors → top-k → typical-p → top-p → min-p → temperature → sample.
 * Why temperature last: the truncation controls then decide *which* tokens are plausible from the
 * model's own distribution, and temperature only reshapes the choice among them, so a high
 * temperature cannot pull junk tokens back in (Hugging Face and vLLM apply temperature first;
 * pass `order` to get that). Penalties and bans come first so truncation sees their effect, and
 * user processors (constraints) sit before truncation so top-k cannot leave only forbidden tokens.
 */
import { InvalidOptionError } from '../errors.js';
import { createChain, type SamplingChain } from './chain.js';
import { createLogitBias } from './processors/logit-bias.js';
import { createMinP } from './processors/min-p.js';
import { createNoRepeatNgram } from './processors/no-repeat-ngram.js';
import { createPresenceFrequencyPenalty } from './processors/presence-frequency-penalty.js';
import { createRepetitionPenalty } from './processors/repetition-penalty.js';
import { createTemperature } from './processors/temperature.js';
import { createTopK } from './processors/top-k.js';
import { createTopP } from './processors/top-p.js';
import { createTypicalP } from './processors/typical-p.js';
import { checkNumber, describeValue } from './processors/check.js';
import { createRng } from './rng.js';
import { createDistSampler, createGreedySampler } from './samplers.js';
import type { LogitsProcessor } from './types.js';

/** Names of the built-in controls, as used in `order`. */
export const CONTROL_NAMES = [
  'repetition-penalty', 'presence-frequency-penalty', 'logit-bias', 'no-repeat-ngram', 'processors',
  'top-k', 'typical-p', 'top-p', 'min-p', 'temperature',
] as const;

/** One built-in control ('processors' is the slot where user processors run). */
export type ControlName = (typeof CONTROL_NAMES)[number];

/** The default order; see the module comment for why. */
export const DEFAULT_ORDER: readonly ControlName[] = CONTROL_NAMES;

/** User-facing sampling options (camelCase). Absent or undefined = neutral. */
export interface SamplingOptions {
  /** ≥ 0; 0 = greedy (argmax); default 1. */
  temperature?: number;
  /** Integer ≥ 0; 0 = off. */
  topK?: number;
  /** (0, 1]; 1 = off. */
  topP?: number;
  /** [0, 1]; 0 = off. */
  minP?: number;
  /** (0, 1]; 1 = off. */
  typicalP?: number;
  /** > 0 (CTRL/HF form); 1 = off. */
  repetitionPenalty?: number;
  /** Window of the repetition penalty: integer ≥ 1, or -1 (default) for the whole context incl. prompt. */
  repetitionPenaltyLastN?: number;
  /** [-2, 2] (OpenAI form, over generated tokens only); 0 = off. */
  presencePenalty?: number;
  /** [-2, 2] (OpenAI form, over generated tokens only); 0 = off. */
  frequencyPenalty?: number;
  /** Token id → bias added to its logit; -Infinity bans. Record keys are decimal ids. */
  logitBias?: Readonly<Record<string, number>> | ReadonlyMap<number, number>;
  /** Integer ≥ 0; 0 = off. Hugging Face no_repeat_ngram_size semantics. */
  noRepeatNgramSize?: number;
  /** Safe integer; reduced mod 2^32 for the Rng. Absent → a fresh random seed, reported by describe(). */
  seed?: number;
  /** User processors, run in the 'processors' slot of `order`, in array order. */
  processors?: readonly LogitsProcessor[];
  /** Order of the built-in controls; may omit controls only if their options are unset. */
  order?: readonly ControlName[];
}

/** Every key SamplingOptions accepts (lets a caller split a larger options object). */
export const SAMPLING_OPTION_KEYS = [
  'temperature', 'topK', 'topP', 'minP', 'typicalP', 'repetitionPenalty', 'repetitionPenaltyLastN',
  'presencePenalty', 'frequencyPenalty', 'logitBias', 'noRepeatNgramSize', 'seed', 'processors', 'order',
] as const satisfies readonly (keyof SamplingOptions)[];

const KEY_SET: ReadonlySet<string> = new Set(SAMPLING_OPTION_KEYS);
const CONTROL_SET: ReadonlySet<string> = new Set(CONTROL_NAMES);
const INT_MAX = Number.MAX_SAFE_INTEGER;

/** Normalises a logitBias option to a Map, validating ids (against vocabSize when given) and values. */
function toBiasMap(raw: unknown, vocabSize?: number): Map<number, number> {
  const out = new Map<number, number>();
  const range = vocabSize === undefined ? '>= 0' : `in [0, ${vocabSize - 1}]`;
  const put = (id: number, shown: string, b: unknown) => {
    if (!Number.isSafeInteger(id) || id < 0 || (vocabSize !== undefined && id >= vocabSize)) {
      throw new InvalidOptionError(`logitBias token id must be an integer ${range}, got ${shown}`);
    }
    if (typeof b !== 'number' || Number.isNaN(b) || b === Infinity) {
      throw new InvalidOptionError(`logitBias[${id}] must be a finite number or -Infinity (ban), got ${describeValue(b)}`);
    }
    out.set(id, b);
  };
  if (raw instanceof Map) {
    for (const [k, b] of raw) put(typeof k === 'number' ? k : NaN, describeValue(k), b);
  } else if (typeof raw === 'object' && raw !== null && !Array.isArray(raw)) {
    for (const [k, b] of Object.entries(raw)) put(/^(0|[1-9][0-9]*)$/.test(k) ? Number(k) : NaN, JSON.stringify(k), b);
  } else {
    throw new InvalidOptionError(`logitBias must be an object or Map of token id → bias, got ${describeValue(raw)}`);
  }
  return out;
}

/**
 * Checks every option; returns a copy without undefined entries. `vocabSize`, when given, bounds
 * logitBias ids. Throws InvalidOptionError naming the first bad option and its allowed range.
 */
export function validateSamplingOptions(options: unknown, vocabSize?: number): SamplingOptions {
  if (options === undefined || options === null) return {};
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw new InvalidOptionError(`sampling options must be an object, got ${describeValue(options)}`);
  }
  const o: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(options)) {
    if (!KEY_SET.has(k)) {
      throw new InvalidOptionError(`unknown sampling option "${k}" (supported: ${SAMPLING_OPTION_KEYS.join(', ')})`);
    }
    if (v !== undefined) o[k] = v;
  }
  if ('temperature' in o) checkNumber('temperature', o['temperature'], 0, Infinity, { maxOpen: true });
  if ('topK' in o) checkNumber('topK', o['topK'], 0, INT_MAX, { integer: true });
  if ('topP' in o) checkNumber('topP', o['topP'], 0, 1, { minOpen: true });
  if ('minP' in o) checkNumber('minP', o['minP'], 0, 1);
  if ('typicalP' in o) checkNumber('typicalP', o['typicalP'], 0, 1, { minOpen: true });
  if ('repetitionPenalty' in o) checkNumber('repetitionPenalty', o['repetitionPenalty'], 0, Infinity, { minOpen: true, maxOpen: true });
  if ('repetitionPenaltyLastN' in o && o['repetitionPenaltyLastN'] !== -1) {
    const n = o['repetitionPenaltyLastN'];
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) {
      throw new InvalidOptionError(`repetitionPenaltyLastN must be an integer >= 1, or -1 for the whole context, got ${describeValue(n)}`);
    }
  }
  if ('presencePenalty' in o) checkNumber('presencePenalty', o['presencePenalty'], -2, 2);
  if ('frequencyPenalty' in o) checkNumber('frequencyPenalty', o['frequencyPenalty'], -2, 2);
  if ('logitBias' in o) o['logitBias'] = toBiasMap(o['logitBias'], vocabSize);
  if ('noRepeatNgramSize' in o) checkNumber('noRepeatNgramSize', o['noRepeatNgramSize'], 0, INT_MAX, { integer: true });
  if ('seed' in o) checkNumber('seed', o['seed'], Number.MIN_SAFE_INTEGER, INT_MAX, { integer: true });
  if ('processors' in o) {
    const ps = o['processors'];
    if (!Array.isArray(ps)) throw new InvalidOptionError(`processors must be an array of LogitsProcessor, got ${describeValue(ps)}`);
    ps.forEach((p: unknown, i) => {
      const q = p as Partial<Record<'name' | 'apply' | 'accept' | 'clone', unknown>> | null;
      if (typeof q !== 'object' || q === null || typeof q.name !== 'string' || q.name === '' || typeof q.apply !== 'function'
          || (q.accept !== undefined && typeof q.accept !== 'function') || (q.clone !== undefined && typeof q.clone !== 'function')) {
        throw new InvalidOptionError(`processors[${i}] must be a LogitsProcessor (non-empty name, apply(), optional accept()/clone())`);
      }
    });
  }
  if ('order' in o) {
    const ord = o['order'];
    if (!Array.isArray(ord)) throw new InvalidOptionError(`order must be an array of control names (${CONTROL_NAMES.join(', ')})`);
    const seen = new Set<string>();
    for (const name of ord as unknown[]) {
      if (typeof name !== 'string' || !CONTROL_SET.has(name)) {
        throw new InvalidOptionError(`order contains ${describeValue(name)}; allowed: ${CONTROL_NAMES.join(', ')}`);
      }
      if (seen.has(name)) throw new InvalidOptionError(`order lists "${name}" twice`);
      seen.add(name);
    }
  }
  return o as SamplingOptions;
}

/** Which option(s) switch a control on, for the "set but not in order" error. */
const CONTROL_OPTIONS: Record<ControlName, string> = {
  'repetition-penalty': 'repetitionPenalty', 'presence-frequency-penalty': 'presencePenalty/frequencyPenalty',
  'logit-bias': 'logitBias', 'no-repeat-ngram': 'noRepeatNgramSize', processors: 'processors', 'top-k': 'topK',
  'typical-p': 'typicalP', 'top-p': 'topP', 'min-p': 'minP', temperature: 'temperature',
};

/** Controls that never change the argmax, so they are dropped from the tail of a greedy chain. */
const ARGMAX_SAFE: ReadonlySet<ControlName> = new Set(['top-k', 'top-p', 'min-p']);

function randomSeed(): number {
  // Not Math.random: an unseeded run gets an OS-random seed, reported by describe() for replay.
  return globalThis.crypto.getRandomValues(new Uint32Array(1))[0]!;
}

/**
 * Validates `options` and builds the chain for a vocabulary of `vocabSize` tokens.
 * Temperature 0 → greedy sampler (and top-k/top-p/min-p at the end of the chain are dropped:
 * they always keep the argmax, so they cannot change a greedy pick). Otherwise the seeded
 * distribution sampler. Neutral controls are omitted.
 */
export function createSamplingChain(options: SamplingOptions | undefined, vocabSize: number): SamplingChain {
  if (!Number.isSafeInteger(vocabSize) || vocabSize < 1) throw new RangeError(`vocabSize must be a positive integer, got ${vocabSize}`);
  const o = validateSamplingOptions(options, vocabSize);
  const temperature = o.temperature ?? 1;
  const pres = o.presencePenalty ?? 0, freq = o.frequencyPenalty ?? 0;
  const bias = (o.logitBias ?? new Map()) as Map<number, number>;
  const build: Record<ControlName, () => LogitsProcessor[]> = {
    'repetition-penalty': () => (o.repetitionPenalty ?? 1) === 1 ? []
      : [createRepetitionPenalty(o.repetitionPenalty!, o.repetitionPenaltyLastN ?? -1)],
    'presence-frequency-penalty': () => pres === 0 && freq === 0 ? [] : [createPresenceFrequencyPenalty(pres, freq)],
    'logit-bias': () => bias.size === 0 ? [] : [createLogitBias(bias, vocabSize)],
    'no-repeat-ngram': () => (o.noRepeatNgramSize ?? 0) === 0 ? [] : [createNoRepeatNgram(o.noRepeatNgramSize!)],
    processors: () => [...(o.processors ?? [])],
    'top-k': () => (o.topK ?? 0) === 0 || o.topK! >= vocabSize ? [] : [createTopK(o.topK!)],
    'typical-p': () => (o.typicalP ?? 1) === 1 ? [] : [createTypicalP(o.typicalP!)],
    'top-p': () => (o.topP ?? 1) === 1 ? [] : [createTopP(o.topP!)],
    'min-p': () => (o.minP ?? 0) === 0 ? [] : [createMinP(o.minP!)],
    temperature: () => temperature === 1 || temperature === 0 ? [] : [createTemperature(temperature)],
  };
  const order = o.order ?? DEFAULT_ORDER;
  const stages: { control: ControlName; ps: LogitsProcessor[] }[] = [];
  const enabled = new Map<ControlName, LogitsProcessor[]>();
  for (const control of CONTROL_NAMES) {
    const ps = build[control]();
    if (ps.length === 0) continue;
    if (!order.includes(control)) {
      throw new InvalidOptionError(`${CONTROL_OPTIONS[control]} is set but "${control}" is missing from order`);
    }
    enabled.set(control, ps);
  }
  for (const control of order) {
    const ps = enabled.get(control);
    if (ps !== undefined) stages.push({ control, ps });
  }
  const greedy = temperature === 0;
  if (greedy) while (stages.length > 0 && ARGMAX_SAFE.has(stages[stages.length - 1]!.control)) stages.pop();
  const seed = o.seed ?? randomSeed();
  return createChain(stages.flatMap((s) => s.ps), greedy ? createGreedySampler() : createDistSampler(), createRng(seed), seed);
}

/**
 * The sampling-control flags shared by generate, chat and inspect, and the one function that
 * turns them into library SamplingOptions. The CLI's defaults are llama.cpp's; the library's own
 * defaults are neutral.
 */
import { type Command, InvalidArgumentError } from 'commander';
import type { ControlName, SamplingOptions } from '../decode/options.js';
import { collect, parseInteger, parseNumber } from './parse-args.js';

export const CLI_DEFAULTS = { maxTokens: 256, temperature: 0.8, topK: 40, topP: 0.95, minP: 0.05 } as const;

export interface SamplingFlags {
  temperature: number;
  topK: number;
  topP: number;
  minP: number;
  typicalP?: number;
  repetitionPenalty?: number;
  repeatLastN?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  logitBias?: [number, number][];
  /** --no-repeat-ngram-size N: commander reads any `--no-…` flag as a negation, so the value lands here. */
  repeatNgramSize?: number | boolean;
  order?: ControlName[];
}

/** `ID=BIAS` for --logit-bias (BIAS may be -inf to ban the token). */
export function parseLogitBias(v: string): [number, number] {
  const m = /^\s*(\d+)\s*=\s*(.+)$/.exec(v);
  if (!m) throw new InvalidArgumentError(`expected ID=BIAS (e.g. 13=-inf), got "${v}"`);
  return [parseInteger(m[1]!), parseNumber(m[2]!)];
}

/** Comma-separated control names for --order (validated by the library). */
function parseOrder(v: string): ControlName[] {
  return v.split(',').map((s) => s.trim()).filter((s) => s !== '') as ControlName[];
}

/** Add every sampling control to a command (the seed flag stays with each command: its meaning differs). */
export function withSamplingFlags(cmd: Command): Command {
  return cmd
    .option('--temperature <t>', 'sampling temperature; 0 = greedy', parseNumber, CLI_DEFAULTS.temperature)
    .option('--top-k <k>', 'keep the k most likely tokens; 0 = off', parseInteger, CLI_DEFAULTS.topK)
    .option('--top-p <p>', 'nucleus sampling threshold in (0, 1]; 1 = off', parseNumber, CLI_DEFAULTS.topP)
    .option('--min-p <p>', 'drop tokens below p × the top probability; 0 = off', parseNumber, CLI_DEFAULTS.minP)
    .option('--typical-p <p>', 'locally typical sampling mass in (0, 1]; 1 = off', parseNumber)
    .option('--repetition-penalty <r>', 'divide/multiply logits of tokens already seen (CTRL form); 1 = off', parseNumber)
    .option('--repeat-last-n <n>', 'window of the repetition penalty in tokens; -1 = whole context (default)', parseInteger)
    .option('--presence-penalty <p>', 'subtract P from tokens already generated, in [-2, 2]; 0 = off', parseNumber)
    .option('--frequency-penalty <f>', 'subtract F × count of each generated token, in [-2, 2]; 0 = off', parseNumber)
    .option('--logit-bias <id=bias>', 'add BIAS to token ID\'s logit; -inf bans it (repeatable)', collect(parseLogitBias))
    .option('--no-repeat-ngram-size <n>', 'never repeat an n-gram of this size; 0 = off', parseInteger)
    .option('--order <controls>', 'comma-separated order of the controls (default: repetition-penalty,presence-frequency-penalty,logit-bias,no-repeat-ngram,processors,top-k,typical-p,top-p,min-p,temperature)', parseOrder);
}

/**
 * The flags as SamplingOptions. `useDefault(key)` decides whether a flag still at its CLI default
 * is passed on (beam search drops the sampling defaults, which do not apply to it).
 */
export function samplingFromFlags(flags: SamplingFlags, useDefault: (key: 'temperature' | 'topK' | 'topP' | 'minP') => boolean = () => true): SamplingOptions {
  return {
    ...(useDefault('temperature') && { temperature: flags.temperature }),
    ...(useDefault('topK') && { topK: flags.topK }),
    ...(useDefault('topP') && { topP: flags.topP }),
    ...(useDefault('minP') && { minP: flags.minP }),
    ...(flags.typicalP !== undefined && { typicalP: flags.typicalP }),
    ...(flags.repetitionPenalty !== undefined && { repetitionPenalty: flags.repetitionPenalty }),
    ...(flags.repeatLastN !== undefined && { repetitionPenaltyLastN: flags.repeatLastN }),
    ...(flags.presencePenalty !== undefined && { presencePenalty: flags.presencePenalty }),
    ...(flags.frequencyPenalty !== undefined && { frequencyPenalty: flags.frequencyPenalty }),
    ...(flags.logitBias !== undefined && { logitBias: new Map(flags.logitBias) }),
    ...(typeof flags.repeatNgramSize === 'number' && { noRepeatNgramSize: flags.repeatNgramSize }),
    ...(flags.order !== undefined && { order: flags.order }),
  };
}

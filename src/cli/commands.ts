/** The list of CLI commands: adding one is one import and one entry. */
import type { Command } from 'commander';
import { register as generate } from './generate.js';
import { register as tokenize } from './tokenize.js';
import { register as evalCmd } from './eval.js';
import { register as info } from './info.js';
import { register as quantize } from './quantize.js';
import { register as synth } from './synth.js';
import { register as template } from './template.js';
import { register as chat } from './chat.js';
import { register as score } from './score.js';
import { register as serve } from './serve.js';
import { register as inspect } from './inspect.js';

export type RegisterCommand = (program: Command) => void;

export const commands: RegisterCommand[] = [
  generate,
  tokenize,
  evalCmd,
  info,
  quantize,
  synth,
  template,
  chat,
  score,
  serve,
  inspect,
];

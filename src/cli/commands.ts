/** The list of CLI commands: adding one is one import and one entry. */
import type { Command } from 'commander';
import { register as tokenize } from './tokenize.js';

export type RegisterCommand = (program: Command) => void;

export const commands: RegisterCommand[] = [
  tokenize,
];

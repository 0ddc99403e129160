/** The list of CLI commands: adding one is one import and one entry. */
import type { Command } from 'commander';

export type RegisterCommand = (program: Command) => void;

export const commands: RegisterCommand[] = [
];

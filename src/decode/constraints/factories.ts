/**
 * The public constructors: GBNF text, JSON mode, or a JSON Schema → a grammar constraint
 * (LogitsProcessor) for one tokenizer. Compiled automata are cached by grammar text and shared
 * between constraints, so repeated requests with the same schema reuse the states already built.
 */
import type { Tokenizer } from '../../tokenizer/tokenizer.js';
import { createAutomatonConstraint, type ConstraintOptions, type GrammarConstraint } from './constraint-processor.js';
import { parseGbnf } from './gbnf.js';
import { compileGrammar } from './grammar.js';
import { GrammarAutomaton } from './grammar-automaton.js';
import { jsonModeGbnf, type JsonModeOptions } from './json-grammar.js';
import { jsonSchemaToGbnf, type JsonSchemaGrammarOptions } from './json-schema.js';

const CACHE_SIZE = 16;
const automata = new Map<string, GrammarAutomaton>();

/** Parses, compiles and caches (LRU by text) the automaton of a GBNF grammar. */
export function grammarAutomaton(gbnf: string): GrammarAutomaton {
  let a = automata.get(gbnf);
  if (a !== undefined) {
    automata.delete(gbnf);
  } else {
    a = new GrammarAutomaton(compileGrammar(parseGbnf(gbnf)));
    if (automata.size >= CACHE_SIZE) automata.delete(automata.keys().next().value!);
  }
  automata.set(gbnf, a);
  return a;
}

/** A constraint from GBNF text (llama.cpp grammar notation; start rule `root`). */
export function createGrammarConstraint(gbnf: string, tokenizer: Tokenizer, opts: ConstraintOptions = {}): GrammarConstraint {
  return createAutomatonConstraint(grammarAutomaton(gbnf), tokenizer, opts, 'grammar');
}

/** Options of createJsonConstraint. */
export interface JsonConstraintOptions extends ConstraintOptions, JsonModeOptions {}

/** JSON mode: output is one JSON object (or any JSON value with `root: 'value'`). */
export function createJsonConstraint(tokenizer: Tokenizer, opts: JsonConstraintOptions = {}): GrammarConstraint {
  const { root, whitespace, ...rest } = opts;
  const gbnf = jsonModeGbnf({ ...(root !== undefined && { root }), ...(whitespace !== undefined && { whitespace }) });
  return createAutomatonConstraint(grammarAutomaton(gbnf), tokenizer, rest, 'json', { root: root ?? 'object', whitespace: whitespace ?? 0 });
}

/** Options of createJsonSchemaConstraint. */
export interface JsonSchemaConstraintOptions extends ConstraintOptions, JsonSchemaGrammarOptions {}

/**
 * JSON-Schema mode: output parses as JSON and validates against `schema` (see json-schema.ts for
 * the supported keywords; anything else throws UnsupportedError naming the keyword).
 */
export function createJsonSchemaConstraint(schema: unknown, tokenizer: Tokenizer, opts: JsonSchemaConstraintOptions = {}): GrammarConstraint {
  const { whitespace, ...rest } = opts;
  const gbnf = jsonSchemaToGbnf(schema, whitespace === undefined ? {} : { whitespace });
  return createAutomatonConstraint(grammarAutomaton(gbnf), tokenizer, rest, 'json-schema', { whitespace: whitespace ?? 0 });
}

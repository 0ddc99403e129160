/** Constrained decoding: GBNF grammars, JSON mode and JSON Schema as token-masking LogitsProcessors. */
export { createGrammarConstraint, createJsonConstraint, createJsonSchemaConstraint, grammarAutomaton } from './factories.js';
export type { JsonConstraintOptions, JsonSchemaConstraintOptions } from './factories.js';
export type { ConstraintOptions, ConstraintStats, GrammarConstraint } from './constraint-processor.js';
export { createAutomatonConstraint } from './constraint-processor.js';
export { jsonSchemaToGbnf } from './json-schema.js';
export { jsonModeGbnf } from './json-grammar.js';
export { parseGbnf } from './gbnf.js';
export type { GrammarAst, GrammarExpr } from './gbnf.js';
export { compileGrammar } from './grammar.js';
export type { CompiledGrammar } from './grammar.js';
export { GrammarAutomaton } from './grammar-automaton.js';
export type { AutomatonState } from './grammar-automaton.js';
export { buildTokenTrie, tokenTrieFor } from './token-trie.js';
export type { TokenTrie } from './token-trie.js';

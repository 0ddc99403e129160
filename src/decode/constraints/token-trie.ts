/**
 * A byte trie of the vocabulary, flattened in pre-order: node i's subtree is [i, end[i]), its
 * depth is depth[i]. A constraint walks it once per step carrying the automaton state per depth
 * and skips a whole subtree when the state dies, so one step costs O(live trie nodes) rather than
 * O(vocabulary × token length) (the token-trie technique of Outlines / llguidance, in its
 * simplest form).
 *
 * Only tokens that contribute text are included: control, unknown and unused tokens, and tokens
 * with no bytes, are left out (so a constraint never allows them). End-of-generation ids are
 * handled by the constraint itself.
 */
import { TokenType, type Tokenizer } from '../../tokenizer/tokenizer.js';

/** The flattened trie. Node 0 is the root (empty string). */
export interface TokenTrie {
  readonly nodeCount: number;
  /** Byte leading into the node (unused for the root). */
  readonly byte: Uint8Array;
  readonly depth: Uint16Array;
  /** One past the last node of the subtree. */
  readonly end: Int32Array;
  /** Tokens whose bytes end exactly at node i: tokens[tokStart[i] .. tokStart[i+1]). */
  readonly tokStart: Int32Array;
  readonly tokens: Int32Array;
  readonly maxDepth: number;
  /** How many tokens are in the trie. */
  readonly tokenCount: number;
}

/** Whether a token may ever be produced under a constraint (it must contribute text). */
export function isTextToken(tokenizer: Tokenizer, id: number): boolean {
  const t = tokenizer.tokenType(id);
  return t !== TokenType.Control && t !== TokenType.Unknown && t !== TokenType.Unused;
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

/** Builds the trie of `entries` (token id + its bytes). */
export function buildTokenTrie(entries: readonly { id: number; bytes: Uint8Array }[]): TokenTrie {
  const sorted = entries.filter((e) => e.bytes.length > 0).sort((x, y) => compareBytes(x.bytes, y.bytes) || x.id - y.id);
  const byte: number[] = [0], depth: number[] = [0], end: number[] = [0], tokStart: number[] = [0];
  const tokens: number[] = [];
  const path: number[] = [0]; // node index per depth along the current branch
  let prev: Uint8Array = new Uint8Array(0);
  for (const { id, bytes } of sorted) {
    let lcp = 0;
    while (lcp < prev.length && lcp < bytes.length && prev[lcp] === bytes[lcp]) lcp++;
    // Close the nodes of the previous branch below the common prefix.
    while (path.length - 1 > lcp) end[path.pop()!] = byte.length;
    for (let d = lcp; d < bytes.length; d++) {
      const n = byte.length;
      byte.push(bytes[d]!); depth.push(d + 1); end.push(0); tokStart.push(tokens.length);
      path.push(n);
    }
    tokens.push(id);
    prev = bytes;
  }
  while (path.length > 0) end[path.pop()!] = byte.length;
  tokStart.push(tokens.length);
  // tokStart[i] was recorded when node i was created; tokens ending at i were pushed right after
  // (lexicographic order puts a string before its extensions), so each node's tokens are contiguous
  // and end where the next node's begin.
  return {
    nodeCount: byte.length,
    byte: Uint8Array.from(byte),
    depth: Uint16Array.from(depth),
    end: Int32Array.from(end),
    tokStart: Int32Array.from(tokStart),
    tokens: Int32Array.from(tokens),
    maxDepth: depth.reduce((m, d) => Math.max(m, d), 0),
    tokenCount: tokens.length,
  };
}

const cache = new WeakMap<Tokenizer, Map<boolean, TokenTrie>>();

/**
 * The trie of a tokenizer's text tokens (cached per tokenizer). `afterBos` selects the bytes a
 * token contributes right after BOS (SentencePiece drops the dummy-prefix space there).
 */
export function tokenTrieFor(tokenizer: Tokenizer, afterBos = false): TokenTrie {
  let m = cache.get(tokenizer);
  if (!m) { m = new Map(); cache.set(tokenizer, m); }
  let t = m.get(afterBos);
  if (!t) {
    const entries: { id: number; bytes: Uint8Array }[] = [];
    for (let id = 0; id < tokenizer.vocabSize; id++) {
      if (tokenizer.endOfGeneration.has(id) || !isTextToken(tokenizer, id)) continue;
      entries.push({ id, bytes: tokenizer.tokenBytes(id, afterBos) });
    }
    t = buildTokenTrie(entries);
    m.set(afterBos, t);
  }
  return t;
}

/**
 * Incremental detokenizer for streaming generation. Each `push(id)` returns only complete UTF-8
 * text: the bytes of a character split over several byte-fallback tokens (e.g. an emoji as
 * `<0xF0><0x9F><0x98><0x80>`) are held back until the character is complete (WHATWG
 * TextDecoder in stream mode). Invalid sequences become U+FFFD as soon as they are known to be
 * invalid; `flush()` turns an unfinished tail into U+FFFD. The concatenation of all pushes and
 * the flush equals `tokenizer.decode()` of the same ids (with the context before them).
 */
import { isSpecialToken } from './decode-ids.js';
import type { Tokenizer } from './tokenizer.js';

export interface StreamDecoderOptions {
  /**
   * Ids already in the sequence before the first pushed id (the prompt). Only its last id
   * matters: whether the first generated token follows BOS or starts the sequence, where
   * SentencePiece drops the dummy-prefix space.
   */
  context?: readonly number[];
  /** Leave out control/unknown tokens (as `decode(ids, { skipSpecial: true })`). */
  skipSpecial?: boolean;
}

/** Turns a stream of token ids into a stream of complete text pieces. */
export class StreamDecoder {
  private readonly decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  private prev: number | null;
  private readonly skipSpecial: boolean;

  constructor(private readonly tokenizer: Tokenizer, opts: StreamDecoderOptions = {}) {
    const ctx = opts.context ?? [];
    this.prev = ctx.length > 0 ? ctx[ctx.length - 1]! : null;
    this.skipSpecial = opts.skipSpecial ?? false;
  }

  /** Add one token; returns the text that became complete (possibly ''). */
  push(id: number): string {
    const afterBos = this.prev === null || this.prev === this.tokenizer.bos;
    this.prev = id;
    if (this.skipSpecial && isSpecialToken(this.tokenizer, id)) return '';
    return this.decoder.decode(this.tokenizer.tokenBytes(id, afterBos), { stream: true });
  }

  /** End of stream: whatever is still held back (an incomplete character becomes U+FFFD). */
  flush(): string {
    return this.decoder.decode();
  }
}

/** Create a {@link StreamDecoder}. */
export function createStreamDecoder(tokenizer: Tokenizer, opts?: StreamDecoderOptions): StreamDecoder {
  return new StreamDecoder(tokenizer, opts);
}

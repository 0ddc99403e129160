/**
 * The tokenizer contract shared by every vocabulary kind (SentencePiece-style, byte-level BPE, HF tokenizer.json).
 */
export interface EncodeOptions {
  /** Prepend BOS when the vocabulary asks for it (default: the vocabulary's add_bos flag). */
  addBos?: boolean;
  /** Append EOS when the vocabulary asks for it (default: the vocabulary's add_eos flag). */
  addEos?: boolean;
  /**
   * Parse special-token text (e.g. `<|im_end|>`) into special ids. Default false: user text is
   * always tokenized as text, so it can never inject control tokens.
   */
  parseSpecial?: boolean;
}

export type TokenizerKind = 'spm' | 'bpe' | 'hf';

/** Token attributes (GGUF tokenizer.ggml.token_type values). */
export enum TokenType { Undefined = 0, Normal = 1, Unknown = 2, Control = 3, UserDefined = 4, Unused = 5, Byte = 6 }

export interface Tokenizer {
  readonly kind: TokenizerKind;
  readonly vocabSize: number;
  readonly bos: number | null;
  readonly eos: number | null;
  readonly unk: number | null;
  /** Ids that end generation: eos, end-of-turn (eot, eom, `<|im_end|>`...). */
  readonly endOfGeneration: ReadonlySet<number>;
  /** Whether encode() adds BOS by default. */
  readonly addBos: boolean;
  readonly addEos: boolean;
  encode(text: string, opts?: EncodeOptions): number[];
  /** The vocabulary string of a token, as stored (e.g. "▁the", "<0x0A>", "Ġthe"). */
  piece(id: number): string;
  /** Look up a token id by its vocabulary string. */
  tokenId(piece: string): number | undefined;
  tokenType(id: number): TokenType;
  /**
   * The bytes a token contributes to the text. `afterBos` is true when the token directly follows
   * BOS or starts the sequence, where SentencePiece drops the dummy-prefix space.
   */
  tokenBytes(id: number, afterBos?: boolean): Uint8Array;
  /** Decode a whole sequence (special tokens rendered as their text unless `skipSpecial`). */
  decode(ids: readonly number[], opts?: { skipSpecial?: boolean }): string;
}

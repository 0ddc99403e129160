/**
 * Typed errors. Every failure the user can cause (bad file, bad option, bad request)
 * surfaces as one of these with a one-line message that names the problem.
 */
export class TokenloopError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** A model or tokenizer file is missing, truncated, corrupt or inconsistent. */
export class ModelFormatError extends TokenloopError {}

/** The file is well-formed but uses something tokenloop does not implement (version, tensor type, architecture). */
export class UnsupportedError extends TokenloopError {}

/** A user option is out of range or not supported. */
export class InvalidOptionError extends TokenloopError {}

/** The prompt (plus requested tokens) does not fit the model's context. */
export class ContextOverflowError extends TokenloopError {}

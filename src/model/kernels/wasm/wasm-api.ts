/**
 * The few WebAssembly JS-API types we use. Node's WebAssembly global is not declared by the
 * ES2022 lib or @types/node 20, and adding the DOM lib would leak browser globals into the
 * engine, so we type it locally.
 */
export interface WasmMemory {
  readonly buffer: SharedArrayBuffer;
  grow(pages: number): number;
}

/** A compiled module (structured-cloneable, so workers receive it in workerData). */
export interface WasmModule {
  readonly __wasmModule?: never;
}

interface WebAssemblyApi {
  Memory: new (d: { initial: number; maximum: number; shared: boolean }) => WasmMemory;
  Module: new (bytes: Uint8Array) => WasmModule;
  validate(bytes: Uint8Array): boolean;
  Instance: new (m: WasmModule, imports: Record<string, Record<string, unknown>>) => { exports: unknown };
}

/** The runtime's WebAssembly namespace. */
export const Wasm = (globalThis as unknown as { WebAssembly: WebAssemblyApi }).WebAssembly;

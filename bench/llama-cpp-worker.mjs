// Child process for bench/llama-cpp.ts: runs llama.cpp (through node-llama-cpp's prebuilt binary,
// CPU only, never building or downloading) on one GGUF and prints one result line:
//   @@RESULT@@{json}
// Input: argv[2] = JSON { modelPath, threads, tokens: number[] (prompt ids) | prompt: string,
//   decode: number, contextSize?: number }.
// The prompt minus its last token is the prefill (one batch); decoding then starts from the last
// prompt token, so `decode` single-token evaluations yield `decode` greedy tokens.

const print = (o) => process.stdout.write('@@RESULT@@' + JSON.stringify(o) + '\n');
const opts = JSON.parse(process.argv[2] ?? '{}');

async function main() {
  const t0 = performance.now();
  let llama;
  try {
    // Imported here so a missing package reads as "unavailable", like a binary that fails to load.
    const { getLlama, LlamaLogLevel } = await import('node-llama-cpp');
    llama = await getLlama({
      build: 'never', usePrebuiltBinaries: true, skipDownload: true, gpu: false,
      progressLogs: false, logLevel: LlamaLogLevel.error, maxThreads: opts.threads,
    });
  } catch (e) {
    print({ ok: false, kind: 'binary', error: String(e?.message ?? e) });
    return;
  }
  const tBinary = performance.now();
  const baseRssBytes = process.memoryUsage().rss;
  const model = await llama.loadModel({ modelPath: opts.modelPath, gpuLayers: 0 });
  const tokens = opts.tokens ?? [model.tokens.bos, ...model.tokenize(opts.prompt ?? '')].filter((t) => t != null);
  if (tokens.length < 2) throw new Error('prompt needs at least 2 tokens');
  const contextSize = opts.contextSize ?? Math.max(64, tokens.length + opts.decode + 8);
  const ctx = await model.createContext({ contextSize, batchSize: Math.max(tokens.length, 32), threads: opts.threads, sequences: 1 });
  const seq = ctx.getSequence();
  const tLoaded = performance.now();

  const prefill = tokens.slice(0, -1);
  const tp0 = performance.now();
  await seq.evaluateWithoutGeneratingNewTokens(prefill);
  const tp1 = performance.now();

  const out = [];
  if (opts.decode > 0) {
    for await (const t of seq.evaluate([tokens.at(-1)], { temperature: 0 })) {
      out.push(t);
      if (out.length >= opts.decode) break;
    }
  }
  const td = performance.now();
  print({
    ok: true,
    binaryMs: tBinary - t0,
    loadMs: tLoaded - tBinary,
    prefillTokens: prefill.length,
    prefillMs: tp1 - tp0,
    decodeTokens: out.length,
    decodeMs: td - tp1,
    tokens: out,
    text: model.detokenize(out),
    threads: ctx.currentThreads ?? opts.threads,
    peakRssBytes: process.resourceUsage().maxRSS * 1024, baseRssBytes,
    buildType: llama.buildType,
  });
  await ctx.dispose();
  await model.dispose();
  await llama.dispose();
}

main().catch((e) => { print({ ok: false, kind: 'run', error: String(e?.message ?? e) }); process.exitCode = 1; });

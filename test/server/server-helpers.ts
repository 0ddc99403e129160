/** Test helpers: a server on 127.0.0.1 (random port) for a model, with an OpenAI client and a request log. */
import OpenAI from 'openai';
import type { FastifyInstance } from 'fastify';
import type { LanguageModel } from '../../src/generate/language-model.js';
import { startServer, type ServerOptions } from '../../src/server/app.js';
import type { RequestRecord } from '../../src/server/generation-route.js';

export interface TestServer {
  app: FastifyInstance;
  url: string;
  client: OpenAI;
  records: RequestRecord[];
  /** Resolves with the next finished request's record. */
  nextRecord(): Promise<RequestRecord>;
  close(): Promise<void>;
}

/** Starts a server for `lm` on loopback; the client never retries and times out after 30 s. */
export async function startTestServer(lm: LanguageModel, opts: Omit<ServerOptions, 'lm'> = {}): Promise<TestServer> {
  const records: RequestRecord[] = [];
  let waiters: Array<(r: RequestRecord) => void> = [];
  const { app, url } = await startServer({
    ...opts, lm, host: '127.0.0.1', port: 0,
    onRequestEnd: (r) => { records.push(r); const w = waiters; waiters = []; for (const f of w) f(r); },
  });
  const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 30_000 });
  return {
    app, url, client, records,
    nextRecord: () => new Promise((resolve) => { waiters.push(resolve); }),
    close: () => app.close(),
  };
}

/** POST JSON (or raw text) and return status and parsed body. */
export async function post(url: string, body: unknown, raw = false): Promise<{ status: number; body: any }> {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: raw ? String(body) : JSON.stringify(body) });
  const text = await r.text();
  let parsed: unknown = text;
  try { parsed = JSON.parse(text); } catch { /* not JSON */ }
  return { status: r.status, body: parsed };
}

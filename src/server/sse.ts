/**
 * Server-sent events as the OpenAI streaming API writes them: one `data: <json>\n\n` per chunk and
 * a final `data: [DONE]\n\n`. Writes wait for the socket to drain, so a slow client slows the
 * generation instead of buffering without bound; a closed connection makes writes no-ops.
 */
import type { ServerResponse } from 'node:http';

/** Writes OpenAI-style SSE chunks to a raw Node response. */
export class SseWriter {
  private opened = false;

  constructor(private readonly res: ServerResponse) {}

  /** True once the client has gone away (writes are then dropped). */
  get closed(): boolean {
    return this.res.destroyed || this.res.writableEnded;
  }

  /** Sends the 200 status and the event-stream headers. */
  open(): void {
    if (this.opened) return;
    this.opened = true;
    this.res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
  }

  /** Sends one `data:` event with `payload` as JSON. */
  async send(payload: unknown): Promise<void> {
    await this.write(`data: ${JSON.stringify(payload)}\n\n`);
  }

  /** Sends `data: [DONE]` and ends the response. */
  done(): void {
    if (this.closed) return;
    this.res.end('data: [DONE]\n\n');
  }

  private async write(text: string): Promise<void> {
    this.open();
    if (this.closed) return;
    if (this.res.write(text)) return;
    await new Promise<void>((resolve) => {
      const finish = () => { this.res.off('drain', finish); this.res.off('close', finish); resolve(); };
      this.res.on('drain', finish);
      this.res.on('close', finish);
    });
  }
}

// An export file as the service streams it (`await client.exports.orders({...})`): read once, as byte chunks (the
// object is an async iterable of Uint8Array), lines() or typed rows(), or saved with saveTo(path). Errors come
// before the file starts (the call throws the ApiError); a file cut off on the way throws ConnectionFailed, never a
// silently short read.

import { open, rename, rm } from 'node:fs/promises';

import { ConnectionFailed, ServiceError } from './errors';
import type { Models, ResponseInfo } from './models';
import type { ModelName } from './operations';
import { fileFormat, fileName, LineSplitter, RowDecoder, type ExportFormat } from './rows';

/** The open answer and how to stop it: `abort` ends the transfer, with a reason that says why. */
export interface OpenBody {
  response: Response;
  abort: (reason: Error) => void;
}

export class ExportFile<N extends ModelName = ModelName> implements AsyncIterable<Uint8Array> {
  /** `csv` or `jsonl`, from the answer's Content-Type. */
  readonly format: ExportFormat;
  readonly contentType: string;
  /** The name the service gives the file, from Content-Disposition. */
  readonly filename: string | null;
  readonly lastResponse: ResponseInfo;
  private read = false;

  /**
   * `idleMs`: the longest wait for the next chunk (the client's `timeoutMs`); a file may take longer than that in
   * all, as long as it keeps coming.
   */
  constructor(private readonly body: OpenBody, private readonly model: N, info: ResponseInfo,
    private readonly where: string, private readonly idleMs: number) {
    this.lastResponse = info;
    this.contentType = info.headers['content-type'] ?? '';
    this.filename = fileName(info.headers['content-disposition']);
    try {
      this.format = fileFormat(this.contentType, where);
    } catch (error) {
      body.abort(error as Error);
      throw error;
    }
  }

  /** The file's bytes, a chunk at a time as they arrive. */
  async *[Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    if (this.read) throw new ServiceError(`${this.where}: a download is read once; call the method again`);
    this.read = true;
    const reader = this.body.response.body?.getReader();
    if (!reader) return;
    let received = 0;
    try {
      for (;;) {
        const timer = setTimeout(() => this.body.abort(new Error(`no data for ${this.idleMs} ms`)), this.idleMs);
        let next: { done: boolean; value?: Uint8Array };
        try {
          next = await reader.read();
        } catch (error) {
          const cause = (error as Error)?.cause ?? error;
          throw new ConnectionFailed(`${this.where}: the file was cut off after ${received} bytes (${String(cause)});`
            + ' call again for the whole file');
        } finally {
          clearTimeout(timer);
        }
        if (next.done) return;
        received += next.value!.byteLength;
        yield next.value!;
      }
    } finally {
      reader.releaseLock();
      await this.cancel();
    }
  }

  /** The file's text lines, without their line ends (a CSV cell may span lines: rows() reads records). */
  async *lines(): AsyncIterable<string> {
    for await (const line of this.rawLines()) yield line.endsWith('\r') ? line.slice(0, -1) : line;
  }

  /** Each row as its model (OrderExportRow, PaymentExportRow, RefundExportRow), the header skipped. */
  async *rows(): AsyncIterable<Models[N]> {
    const decoder = new RowDecoder(this.model, this.format, this.where);
    for await (const line of this.rawLines()) {
      const row = decoder.feed(line);
      if (row !== null) yield row;
    }
    decoder.end();
  }

  /**
   * Writes the file to `path` as it arrives and resolves to its size in bytes; the file appears under its name only
   * once complete (it is `path.part` until then, removed if the transfer fails).
   */
  async saveTo(path: string): Promise<number> {
    const part = `${path}.part`;
    const out = await open(part, 'w');
    let size = 0;
    try {
      try {
        for await (const chunk of this) size += (await out.write(chunk)).bytesWritten;
      } finally {
        await out.close();
      }
      await rename(part, path);
      return size;
    } finally {
      await rm(part, { force: true });
    }
  }

  /** Stops the transfer (when you stop reading early); reading to the end does it for you. */
  async cancel(): Promise<void> {
    await this.body.response.body?.cancel().catch(() => undefined);
  }

  private async *rawLines(): AsyncIterable<string> {
    const splitter = new LineSplitter();
    for await (const chunk of this) yield* splitter.feed(chunk);
    yield* splitter.end();
  }
}

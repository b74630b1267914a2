// Reading an export file as it arrives (pure, no I/O): bytes into lines, lines into typed rows, by the same rules as
// the Python library's rows.py, so a file of any size is never held whole.

import { DecodeError } from './errors';
import { decode, fieldKinds, type Models } from './models';
import type { ModelName } from './operations';

export type ExportFormat = 'csv' | 'jsonl';
const FORMATS: Record<string, ExportFormat> = { 'text/csv': 'csv', 'application/x-ndjson': 'jsonl' };

/** `csv` or `jsonl` from the answer's Content-Type; anything else is not an export this library can read. */
export function fileFormat(contentType: string, where: string): ExportFormat {
  const format = FORMATS[contentType.split(';')[0].trim().toLowerCase()];
  if (!format) {
    throw new DecodeError(`${where}: answered ${contentType || 'no content type'}, not a CSV or JSON Lines file`);
  }
  return format;
}

/** The name the service gives the file (`orders-test-20260301T000000Z-now.csv`). */
export function fileName(contentDisposition: string | null | undefined): string | null {
  return /filename="([^"]+)"/.exec(contentDisposition ?? '')?.[1] ?? null;
}

/**
 * Byte chunks to text lines, split on "\n" only (a JSON string may hold U+2028 or a lone "\r", never a raw "\n");
 * a UTF-8 character cut between two chunks is decoded whole. Each line keeps its "\r" (CSV's CRLF), so a CSV cell
 * that spans lines is read back exactly.
 */
export class LineSplitter {
  private readonly decoder = new TextDecoder('utf-8', { fatal: true });
  private pending = '';

  feed(chunk: Uint8Array): string[] {
    const lines = (this.pending + this.text(chunk, true)).split('\n');
    this.pending = lines.pop() ?? '';
    return lines;
  }

  /** The last line, when the file does not end with a line end. */
  end(): string[] {
    const text = this.pending + this.text(new Uint8Array(), false);
    this.pending = '';
    return text ? [text] : [];
  }

  private text(chunk: Uint8Array, stream: boolean): string {
    try {
      return this.decoder.decode(chunk, { stream });
    } catch (error) {
      throw new DecodeError(`an export file that is not UTF-8: ${String(error)}`);
    }
  }
}

/**
 * Lines of one export file to rows of its model. JSON Lines: one object a line, values as stored. CSV: the header
 * names the cells; a record ends at a line end outside quotes (every cell is quoted and a quote inside one doubled,
 * so an even count of quotes so far closes it); an empty cell is null where the column may be absent, `true` and
 * `false` are booleans where the column is one; other cells stay text as the file has them, the spreadsheet
 * guard's leading `'` included (docs/api.md, Exports).
 */
export class RowDecoder<N extends ModelName> {
  private header: string[] | null = null;
  private parts: string[] = [];
  private quotes = 0;
  private count = 0;

  constructor(private readonly model: N, private readonly format: ExportFormat, private readonly where: string) {}

  /** The row this line completes, or null (the header, a blank line, a record still open). */
  feed(line: string): Models[N] | null {
    if (this.format === 'jsonl') return line.trim() ? this.jsonRow(line) : null;
    this.parts.push(line);
    this.quotes += line.split('"').length - 1;
    if (this.quotes % 2) return null;
    let record = this.parts.join('\n');
    this.parts = [];
    this.quotes = 0;
    if (record.endsWith('\r')) record = record.slice(0, -1);
    if (!record) return null;
    const cells = csvCells(record);
    if (this.header === null) {
      this.header = cells;
      return null;
    }
    if (cells.length !== this.header.length) {
      throw new DecodeError(`${this.where}: CSV record ${this.count + 1} has ${cells.length} cells, ` +
        `the header ${this.header.length}`);
    }
    const kinds = fieldKinds(this.model);
    const header = this.header;
    return this.row(Object.fromEntries(cells.map((c, i) => [header[i], cellValue(c, kinds[header[i]])])));
  }

  /** At the end of the file: a record left open means the file was cut inside a quoted cell. */
  end(): void {
    if (this.parts.join('').trim()) throw new DecodeError(`${this.where}: the file ends inside a quoted CSV cell`);
  }

  private jsonRow(line: string): Models[N] {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw new DecodeError(`${this.where}: line ${this.count + 1} is not JSON: ${String(error)}`);
    }
    return this.row(value);
  }

  private row(value: unknown): Models[N] {
    this.count += 1;
    return decode(this.model, value, `${this.where}[${this.count}]`);
  }
}

/** The cells of one complete CSV record (RFC 4180: quoted cells, a quote inside one doubled). */
export function csvCells(record: string): string[] {
  const cells: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < record.length; i++) {
    const c = record[i];
    if (quoted && c === '"' && record[i + 1] === '"') {
      cell += '"';
      i++;
    } else if (c === '"') {
      quoted = !quoted;
    } else if (c === ',' && !quoted) {
      cells.push(cell);
      cell = '';
    } else {
      cell += c;
    }
  }
  cells.push(cell);
  return cells;
}

function cellValue(text: string, kind: string | undefined): unknown {
  if (kind === undefined) return text; // a column added after this version of the library: kept as the file has it
  if (text === '' && kind.endsWith('?')) return null;
  if (kind.startsWith('boolean') && (text === 'true' || text === 'false')) return text === 'true';
  return text;
}

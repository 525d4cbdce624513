// CSV (RFC 4180) into a RawTable: the first record names the columns; a column
// whose non-empty fields all parse as numbers is numeric, any other is a string
// (category) column. Empty fields are missing values.
import { readFile } from 'node:fs/promises';
import { CategoryBuilder, type RawColumn, type RawTable } from './tabular.js';

class CsvError extends Error {
  override name = 'CsvError';
}

/**
 * Splits CSV text into records of fields. Fields are separated by commas and
 * records by CRLF, LF or CR. A field that starts with a double quote runs to the
 * closing quote; inside it, "" is a literal quote and commas and line breaks are
 * data. A leading byte-order mark and a final line break are ignored; a blank
 * line is a record with one empty field. Throws CsvError (with the line number)
 * on an unterminated quote or on text after a closing quote.
 */
export function parseCsv(text: string, onRecord: (fields: string[], line: number) => boolean | undefined): void {
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const n = text.length;
  let line = 1;
  let fields: string[] = [];
  let recordLine = 1;
  while (i < n) {
    let field: string;
    if (text.charCodeAt(i) === 34 /* " */) {
      const openedAt = line;
      let value = '';
      let from = ++i;
      for (;;) {
        const q = text.indexOf('"', from);
        if (q < 0) throw new CsvError(`line ${openedAt}: unterminated quoted field`);
        value += text.slice(from, q);
        if (text.charCodeAt(q + 1) === 34) {
          value += '"';
          from = q + 2;
          continue;
        }
        i = q + 1;
        break;
      }
      for (let k = 0; k < value.length; k++) {
        const c = value.charCodeAt(k);
        if (c === 10 || (c === 13 && value.charCodeAt(k + 1) !== 10)) line++;
      }
      const next = text.charCodeAt(i);
      if (i < n && next !== 44 && next !== 10 && next !== 13) throw new CsvError(`line ${line}: text after a closing quote`);
      field = value;
    } else {
      let j = i;
      while (j < n) {
        const c = text.charCodeAt(j);
        if (c === 44 || c === 10 || c === 13) break;
        j++;
      }
      field = text.slice(i, j);
      i = j;
    }
    fields.push(field);
    const c = text.charCodeAt(i);
    if (c === 44) {
      i++;
      if (i === n) fields.push(''); // "a,b," at the very end: a last empty field
      continue;
    }
    // End of record: CRLF, LF, CR or end of text.
    if (c === 13 && text.charCodeAt(i + 1) === 10) i += 2;
    else if (i < n) i++;
    if (onRecord(fields, recordLine) === false) return;
    fields = [];
    line++;
    recordLine = line;
  }
  if (fields.length) onRecord(fields, recordLine);
}

const NUMBER = /^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/;

export interface CsvReadOptions {
  /** Keep at most this many data rows. */
  limit?: number;
  /** Columns to leave out. */
  drop?: readonly string[];
}

/** Reads a CSV file with a header row into typed columns. */
export async function readCsvTable(path: string, options: CsvReadOptions = {}): Promise<RawTable> {
  return csvTable(await readFile(path, 'utf8'), path, options);
}

export function csvTable(text: string, where: string, options: CsvReadOptions = {}): RawTable {
  const limit = options.limit ?? Infinity;
  let header: string[] | undefined;
  const cells: string[][] = []; // per column, the raw field of each row
  parseCsv(text, (fields, line) => {
    if (!header) {
      header = fields.map((f) => f.trim());
      const seen = new Set<string>();
      for (const h of header) {
        if (seen.has(h)) throw new CsvError(`${where}: column "${h}" appears twice in the header`);
        seen.add(h);
      }
      header.forEach(() => cells.push([]));
      return true;
    }
    if (fields.length === 1 && fields[0] === '') return true; // blank line
    if (fields.length !== header.length) {
      throw new CsvError(`${where}: line ${line} has ${fields.length} fields, the header has ${header.length}`);
    }
    fields.forEach((f, c) => cells[c]!.push(f));
    return cells[0]!.length < limit;
  });
  if (!header) throw new CsvError(`${where}: empty file`);
  const drop = new Set(options.drop ?? []);
  for (const d of drop) if (!header.includes(d)) throw new CsvError(`${where}: --drop "${d}": no such column (columns: ${header.join(', ')})`);
  const rows = cells[0]?.length ?? 0;
  const columns: RawColumn[] = [];
  header.forEach((name, c) => {
    if (drop.has(name)) return;
    const raw = cells[c]!;
    const numeric = raw.some((f) => f.trim() !== '') && raw.every((f) => f.trim() === '' || NUMBER.test(f.trim()));
    if (numeric) {
      const values = new Float64Array(rows);
      raw.forEach((f, r) => (values[r] = f.trim() === '' ? NaN : Number(f)));
      columns.push({ name, kind: 'number', values });
    } else {
      const categories = new CategoryBuilder();
      const codes = new Int32Array(rows);
      raw.forEach((f, r) => (codes[r] = f === '' ? -1 : categories.codeOf(f)));
      columns.push({ name, kind: 'string', codes, levels: categories.levels });
    }
  });
  return { rows, columns };
}

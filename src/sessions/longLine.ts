import fs from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';

/**
 * A session line of tens of megabytes is almost all one or two strings (an agent's
 * output, a diff). Parsed whole it costs its bytes, its text and what the text
 * parses to: several times its size, for every reader. Scanned here instead, it is
 * read from the file a slice at a time: the rest of the line is parsed as usual, and
 * each long string value of the top-level object stays in the file, checked (escapes,
 * control characters) and measured, to be decoded or copied out as it is only when
 * someone asks for it.
 */

const SLICE_BYTES = 1024 * 1024;
/** A top-level string value longer than this (in bytes, escapes included) stays in the file. */
export const LONG_STRING_BYTES = 256 * 1024;

/** Where a long string value is in the file (its quotes included) and how long it is decoded. */
export interface LongString {
  start: number;
  end: number;
  /** In UTF-16 code units: what `string.length` of the decoded value says. */
  chars: number;
}

export type ScannedLine =
  | {
      ok: true;
      /** The line parsed, each long string value replaced by "". */
      value: unknown;
      /** The long string values by their key in the top-level object. */
      long: Map<string, LongString>;
    }
  | { ok: false; reason: string };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const ESCAPABLE = new Set([0x22, 0x5c, 0x2f, 0x62, 0x66, 0x6e, 0x72, 0x74]);
const isHex = (byte: number) => (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x46) || (byte >= 0x61 && byte <= 0x66);

/** Scans the bytes [start, end) of an open file as one JSON line. */
export async function scanLongLine(handle: FileHandle, start: number, end: number): Promise<ScannedLine> {
  const scanner = new Scanner(start);
  const slice = Buffer.allocUnsafe(Math.min(SLICE_BYTES, end - start));
  for (let position = start; position < end;) {
    const { bytesRead } = await handle.read(slice, 0, Math.min(slice.length, end - position), position);
    if (bytesRead === 0) return { ok: false, reason: 'the line ended early (the file was cut while it was read)' };
    scanner.push(slice.subarray(0, bytesRead));
    position += bytesRead;
  }
  return scanner.finish();
}

/**
 * As `scanLongLine`, reading synchronously (`fd`): for listing, which reads its files so
 * (see lineReader.ts). With `skim`, long values are skipped from quote to quote (a
 * native search) instead of looked at byte by byte: neither measured (their `chars`
 * is 0) nor checked. Indexing ten thousand sessions read 440 MB of such lines in 2 s
 * measuring them, a fraction of that skimming; what stats need of a line is its
 * short fields.
 */
export function scanLongLineSync(fd: number, start: number, end: number, skim = false): ScannedLine {
  const scanner = new Scanner(start, skim);
  const slice = Buffer.allocUnsafe(Math.min(SLICE_BYTES, end - start));
  for (let position = start; position < end;) {
    const bytesRead = fs.readSync(fd, slice, 0, Math.min(slice.length, end - position), position);
    if (bytesRead === 0) return { ok: false, reason: 'the line ended early (the file was cut while it was read)' };
    scanner.push(slice.subarray(0, bytesRead));
    position += bytesRead;
  }
  return scanner.finish();
}

/** A line scanned as it is read, piece after piece (its bytes in order, from `start` in the file); `skim` as in `scanLongLineSync`. */
export function lineScanner(start: number, skim = false): { push(bytes: Buffer): void; finish(): ScannedLine } {
  return new Scanner(start, skim);
}

class Scanner {
  /** The line with long values left out, as bytes: parsed at the end. */
  private readonly kept: Buffer[] = [];
  private depth = 0;
  private inString = false;
  /** Inside a string: 0 after a backslash's escape is done, 1 right after a backslash, 2–5 counting \u digits. */
  private escape = 0;
  /** At depth 1: whether the next string is a key (else a value). */
  private expectKey = false;
  private lastKey = '';
  /** The string being read: its bytes while short, its start, its decoded length, whether it is a value at depth 1. */
  private stringBytes: Buffer[] = [];
  private stringLength = 0;
  private stringStart = 0;
  private stringChars = 0;
  private stringIsTopValue = false;
  private stringIsTopKey = false;
  private long = false;
  private invalid: string | undefined;
  private readonly longValues = new Map<string, LongString>();
  private position: number;
  /** Skimming, inside a string: the bytes read of it end in an odd run of backslashes (its next byte is escaped). */
  private escaping = false;

  constructor(
    start: number,
    private readonly skim = false,
  ) {
    this.position = start;
  }

  push(bytes: Buffer): void {
    let copyFrom = 0;
    for (let index = 0; index < bytes.length; index++) {
      const byte = bytes[index]!;
      if (!this.inString) {
        if (byte === QUOTE) {
          // The bytes before the string are kept as they are; the string is kept only while short.
          this.kept.push(Buffer.from(bytes.subarray(copyFrom, index)));
          copyFrom = index;
          this.openString(this.position + index);
        } else if (byte === 0x7b || byte === 0x5b) {
          this.depth += 1;
          if (this.depth === 1) this.expectKey = byte === 0x7b;
        } else if (byte === 0x7d || byte === 0x5d) this.depth -= 1;
        else if (this.depth === 1 && byte === 0x2c) this.expectKey = true;
        else if (this.depth === 1 && byte === 0x3a) this.expectKey = false;
        continue;
      }
      if (this.skim) {
        const close = this.closingQuote(bytes, index);
        if (close < 0) break; // the rest of the slice is the string's: grown below
        this.grow(bytes.subarray(copyFrom, close + 1));
        copyFrom = close + 1;
        this.closeString(this.position + close + 1);
        index = close;
        continue;
      }
      // Inside a string.
      if (this.escape === 1) {
        if (byte === 0x75) this.escape = 2;
        else {
          if (!ESCAPABLE.has(byte)) this.fail('an invalid escape in a string');
          this.escape = 0;
          this.stringChars += 1;
        }
      } else if (this.escape >= 2) {
        if (!isHex(byte)) this.fail('an invalid \\u escape in a string');
        this.escape = this.escape === 5 ? 0 : this.escape + 1;
        if (this.escape === 0) this.stringChars += 1;
      } else if (byte === BACKSLASH) this.escape = 1;
      else if (byte === QUOTE) {
        this.grow(bytes.subarray(copyFrom, index + 1));
        copyFrom = index + 1;
        this.closeString(this.position + index + 1);
        continue;
      } else if (byte < 0x20) this.fail('a control character in a string');
      else if (byte < 0x80 || (byte >= 0xc0 && byte < 0xf0)) this.stringChars += 1;
      else if (byte >= 0xf0) this.stringChars += 2; // a character beyond the BMP: a surrogate pair
    }
    if (this.inString) this.grow(bytes.subarray(copyFrom));
    else this.kept.push(Buffer.from(bytes.subarray(copyFrom)));
    this.position += bytes.length;
  }

  /** Where the string being read closes in `bytes` from `from` on, or -1 (then whether the bytes end in an escape is carried on). */
  private closingQuote(bytes: Buffer, from: number): number {
    for (let search = from; ;) {
      const quote = bytes.indexOf(QUOTE, search);
      if (quote < 0) {
        this.escaping = oddBackslashesBefore(bytes, bytes.length, from, this.escaping);
        return -1;
      }
      if (!oddBackslashesBefore(bytes, quote, from, this.escaping)) return quote;
      search = quote + 1;
    }
  }

  private openString(at: number): void {
    this.inString = true;
    this.escape = 0;
    this.escaping = false;
    this.stringBytes = [];
    this.stringLength = 0;
    this.stringStart = at;
    this.stringChars = 0;
    this.long = false;
    this.stringIsTopKey = this.depth === 1 && this.expectKey;
    this.stringIsTopValue = this.depth === 1 && !this.expectKey;
  }

  /** More of the string being read; a long value's bytes are no longer kept. */
  private grow(bytes: Buffer): void {
    this.stringLength += bytes.length;
    if (this.long) return;
    if (this.stringIsTopValue && this.stringLength > LONG_STRING_BYTES) {
      this.long = true;
      this.stringBytes = [];
      return;
    }
    this.stringBytes.push(Buffer.from(bytes));
  }

  private closeString(end: number): void {
    this.inString = false;
    if (this.long) {
      this.longValues.set(this.lastKey, { start: this.stringStart, end, chars: this.stringChars });
      this.kept.push(Buffer.from('""'));
      return;
    }
    const text = Buffer.concat(this.stringBytes);
    this.kept.push(text);
    if (this.stringIsTopKey) {
      try {
        this.lastKey = JSON.parse(text.toString('utf8')) as string;
      } catch {
        this.fail('a key that is not a valid string');
      }
    }
  }

  private fail(reason: string): void {
    this.invalid ??= reason;
  }

  finish(): ScannedLine {
    if (this.inString) return { ok: false, reason: 'not valid JSON (a string is not closed)' };
    if (this.invalid) return { ok: false, reason: `not valid JSON (${this.invalid})` };
    let value: unknown;
    try {
      value = JSON.parse(
        Buffer.concat(this.kept)
          .toString('utf8')
          .replace(/^\uFEFF/, ''),
      );
    } catch {
      return { ok: false, reason: 'not valid JSON' };
    }
    return { ok: true, value, long: this.longValues };
  }
}

/** Whether the bytes just before `at` (back to `floor`, then `carriedOdd` for what came before) are an odd run of backslashes. */
function oddBackslashesBefore(bytes: Buffer, at: number, floor: number, carriedOdd: boolean): boolean {
  let run = 0;
  let index = at - 1;
  while (index >= floor && bytes[index] === BACKSLASH) {
    run += 1;
    index -= 1;
  }
  return index < floor ? (run % 2 === 1) !== carriedOdd : run % 2 === 1;
}

/** A long string value as its JSON literal, quotes included, a slice at a time: valid JSON, to be written out as it is. */
export async function* longStringLiteral(handle: FileHandle, value: LongString): AsyncGenerator<Buffer> {
  for (let position = value.start; position < value.end;) {
    const slice = Buffer.allocUnsafe(Math.min(SLICE_BYTES, value.end - position));
    const { bytesRead } = await handle.read(slice, 0, slice.length, position);
    if (bytesRead === 0) return;
    position += bytesRead;
    yield slice.subarray(0, bytesRead);
  }
}

/**
 * A long string value decoded, a slice at a time: escapes are undone across slice
 * boundaries, so the whole is never held as bytes and text at once.
 */
export async function* longStringText(handle: FileHandle, value: LongString): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  // Without its quotes; an escape cut by a slice boundary waits for the next slice.
  let carry = '';
  for await (const bytes of longStringLiteral(handle, { ...value, start: value.start + 1, end: value.end - 1 })) {
    const text = carry + decoder.write(bytes);
    const cut = safeCut(text);
    carry = text.slice(cut);
    if (cut > 0) yield JSON.parse(`"${text.slice(0, cut)}"`) as string;
  }
  const rest = carry + decoder.end();
  if (rest.length > 0) yield JSON.parse(`"${rest}"`) as string;
}

/**
 * Where a piece of a JSON string body can be cut so that each piece parses on its
 * own: never inside an escape (`\n`, `\u00e9`), nor between the two escapes of a
 * surrogate pair (each half alone would be written out as U+FFFD).
 */
function safeCut(text: string): number {
  let cut = text.length;
  for (;;) {
    const last = text.lastIndexOf('\\', cut - 1);
    if (last < 0 || last < cut - 6) return cut;
    // The last backslash starts an escape when an even number of backslashes comes before it.
    let run = 1;
    while (last - run >= 0 && text.charCodeAt(last - run) === 0x5c) run += 1;
    if (run % 2 === 0) return cut;
    const incomplete = last + 1 >= cut || (text.charCodeAt(last + 1) === 0x75 && last + 6 > cut);
    // A complete \uD800–\uDBFF just before the cut waits for the low half that follows it.
    const highSurrogate = !incomplete && last + 6 === cut && text.charCodeAt(last + 1) === 0x75 && /^[dD][89abAB]/.test(text.slice(last + 2, last + 4));
    if (!incomplete && !highSurrogate) return cut;
    cut = last;
  }
}

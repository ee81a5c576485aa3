import { Buffer } from 'node:buffer';

/** How a JSON array's items are laid out: what opens it, goes between two items and closes it, and an empty one. */
export interface JsonArrayLayout {
  open: string;
  between: string;
  close: string;
  empty: string;
}

/** One item a line, for a terminal or a pipe: `codeloops sessions list --json`. */
export const ONE_ITEM_A_LINE: JsonArrayLayout = { open: '[\n', between: ',\n', close: '\n]\n', empty: '[]\n' };
/** Nothing between the items but a comma: an HTTP response. */
export const COMPACT: JsonArrayLayout = { open: '[', between: ',', close: ']', empty: '[]' };

/**
 * A JSON array from items that are each JSON text as UTF-8 bytes: the bytes are
 * copied, never decoded into strings and encoded again (4 MB of summaries, decoded,
 * cost a listing more than reading them; an emoji makes a string two bytes a character).
 */
export function jsonArrayBytes(items: readonly Uint8Array[], layout: JsonArrayLayout = ONE_ITEM_A_LINE): Buffer {
  if (items.length === 0) return Buffer.from(layout.empty);
  return jsonArrayPiece(items, 0, items.length, layout);
}

/**
 * The same array in pieces of at most `perPiece` items, for a response that writes
 * each as it goes: the pieces together are the whole array.
 */
export function* jsonArrayPieces(items: readonly Uint8Array[], perPiece: number, layout: JsonArrayLayout = COMPACT): Generator<Buffer> {
  if (items.length === 0) {
    yield Buffer.from(layout.empty);
    return;
  }
  for (let from = 0; from < items.length; from += perPiece) yield jsonArrayPiece(items, from, Math.min(items.length, from + perPiece), layout);
}

/** Items `from` to `to` with what comes before each (the opening or a separator), and the closing after the last item. */
function jsonArrayPiece(items: readonly Uint8Array[], from: number, to: number, layout: JsonArrayLayout): Buffer {
  const open = Buffer.from(layout.open);
  const between = Buffer.from(layout.between);
  const close = to === items.length ? Buffer.from(layout.close) : Buffer.alloc(0);
  let length = (from === 0 ? open.length : between.length) + between.length * (to - from - 1) + close.length;
  for (let index = from; index < to; index++) length += items[index]!.length;
  const out = Buffer.allocUnsafe(length);
  let at = 0;
  for (let index = from; index < to; index++) {
    const before = index === 0 ? open : between;
    out.set(before, at);
    at += before.length;
    out.set(items[index]!, at);
    at += items[index]!.length;
  }
  out.set(close, at);
  return out;
}

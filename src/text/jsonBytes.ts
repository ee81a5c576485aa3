import { Buffer } from 'node:buffer';

const OPEN = Buffer.from('[\n');
const BETWEEN = Buffer.from(',\n');
const CLOSE = Buffer.from('\n]\n');

/**
 * A JSON array, one item a line, from items that are each JSON text as UTF-8 bytes:
 * the bytes are copied, never decoded into strings and encoded again.
 */
export function jsonArrayBytes(items: readonly Uint8Array[]): Buffer {
  if (items.length === 0) return Buffer.from('[]\n');
  let length = OPEN.length + CLOSE.length + BETWEEN.length * (items.length - 1);
  for (const item of items) length += item.length;
  const out = Buffer.allocUnsafe(length);
  out.set(OPEN, 0);
  let at = OPEN.length;
  items.forEach((item, index) => {
    if (index > 0) {
      out.set(BETWEEN, at);
      at += BETWEEN.length;
    }
    out.set(item, at);
    at += item.length;
  });
  out.set(CLOSE, at);
  return out;
}

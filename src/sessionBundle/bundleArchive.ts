import fs from 'node:fs';
import path from 'node:path';
import { Transform, pipeline as streamPipeline } from 'node:stream';
import zlib from 'node:zlib';
import * as tar from 'tar';
import { CodeloopsError } from '../sessionFormat/failures.js';
import { BUNDLE_ROOT } from '../sessionFormat/sessionBundle.js';

/** A bundle's refusal, saying why (`bundle_invalid`, naming its file). */
export type Invalid = (reason: string, details?: Record<string, unknown>) => Error;

const GZIP_MAGIC = Buffer.from([0x1f, 0x8b]);

/**
 * Unpacks the archive into `staging` as a stream, in bounded memory: the gzip is
 * inflated only as fast as each piece is written to disk (synchronously, so nothing
 * is pending once it stops), and an archive that unpacks to more than `maxBytes` (a
 * file declaring more, the files together, or the stream as a whole) is refused as
 * soon as that shows, having written no more than that. Only folders and regular
 * files are made, under `codeloops-bundle/`, privately (0700 and 0600, as local
 * records are), each once.
 */
export async function unpackArchive(bundleFile: string, staging: string, maxBytes: number, invalid: Invalid): Promise<void> {
  const tooBig = (what: string) => invalid(`it unpacks to more than ${Math.floor(maxBytes / 1024 / 1024)} MB (${what})`, { max_unpacked_bytes: maxBytes });
  let declared = 0;
  let inflated = 0;
  let lead = Buffer.alloc(0);
  let openFile: number | undefined;
  const source = fs.createReadStream(bundleFile);
  // Pieces of 256 KiB rather than 16: a sixteenth of the writes, memory still flat.
  const gunzip = zlib.createGunzip({ chunkSize: 256 * 1024 });
  const parser = new tar.Parser({ strict: true, zstd: false });
  let refusal: Error | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      const stop = (error: Error) => {
        refusal ??= error;
        source.destroy();
        gunzip.destroy();
        parser.abort(error);
        reject(refusal);
      };
      const counted = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          inflated += chunk.length;
          // tar would inflate a gzip found inside the gzip on its own, without these limits: a bundle is one tar in one gzip.
          if (lead.length < GZIP_MAGIC.length) lead = Buffer.concat([lead, chunk.subarray(0, GZIP_MAGIC.length - lead.length)]);
          if (lead.equals(GZIP_MAGIC)) done(invalid('it is a gzip inside a gzip, not a tar file'));
          else if (inflated > maxBytes) done(tooBig(`${inflated} bytes of archive so far`));
          else done(null, chunk);
        },
      });
      parser.on('entry', (entry: tar.ReadEntry) => {
        try {
          const target = stagedPath(staging, entry.path, invalid);
          if (entry.type === 'Directory') {
            fs.mkdirSync(target, { recursive: true, mode: 0o700 });
            entry.resume();
          } else if (entry.type === 'File') {
            declared += entry.size;
            if (declared > maxBytes) throw tooBig(entry.size > maxBytes ? `${entry.path} alone is ${entry.size} bytes` : `its files come to ${declared} bytes`);
            fs.mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
            const fd = (openFile = fs.openSync(target, 'wx', 0o600));
            entry.on('data', (chunk: Buffer) => {
              try {
                writeWhole(fd, chunk);
              } catch (error) {
                stop(error as Error);
              }
            });
            entry.on('end', () => {
              fs.closeSync(fd);
              openFile = undefined;
            });
          } else entry.resume(); // links, devices and the like: a bundle has none, and none is made
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          stop(
            code === 'EEXIST' || code === 'EISDIR' || code === 'ENOTDIR'
              ? invalid(`it holds ${entry.path} twice, or as both a file and a folder`)
              : (error as Error),
          );
          entry.resume();
        }
      });
      parser.on('error', stop);
      parser.on('end', resolve);
      streamPipeline(source, gunzip, counted, (error) => error && stop(error)).pipe(parser);
    });
  } catch (error) {
    if (error instanceof CodeloopsError) throw error;
    throw invalid(`it is not a gzipped tar file (${(error as Error).message})`);
  } finally {
    if (openFile !== undefined) fs.closeSync(openFile);
  }
}

/** Where an archive's member goes in the staging folder: inside `codeloops-bundle/`, or the archive is refused. */
function stagedPath(staging: string, member: string, invalid: Invalid): string {
  const parts = member.split('/').filter((part) => part !== '' && part !== '.');
  if (member.startsWith('/') || parts[0] !== BUNDLE_ROOT || parts.includes('..')) throw invalid(`it holds ${member}, outside ${BUNDLE_ROOT}/`);
  return path.join(staging, ...parts);
}

/** Writes all of `bytes` (a write to a regular file may, rarely, take only part). */
export function writeWhole(fd: number, bytes: Buffer): void {
  for (let written = 0; written < bytes.length;) written += fs.writeSync(fd, bytes, written, bytes.length - written);
}

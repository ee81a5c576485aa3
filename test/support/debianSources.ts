import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from './testEnvironment.js';

/**
 * Real open-source projects for the tests, as Debian ships their sources: fetched at
 * test time from the Debian archive (never committed here), once, into
 * `.cache/oss-fixtures/<package>-<version>/`, and reused afterwards.
 *
 * apt finds the source package in a private copy of bookworm's source index (its own
 * sources file, lists and cache: the machine's apt configuration is neither read nor
 * changed) and says where its files are (`--print-uris`); the upstream tarball is
 * downloaded, checked against the archive's SHA-256 and unpacked. Debian's packaging
 * is not needed: the tree is the upstream release, with its own licence file.
 */
export interface DebianSource {
  /** The source package's name in Debian (`node-bytes`). */
  name: string;
  /** Its Debian version in bookworm (`3.1.2-1`). */
  version: string;
  /** The project's licence file in its tree, recorded beside it. */
  licence: string;
}

export interface FetchedSource {
  /** The unpacked upstream tree: copy it, never change it. */
  tree: string;
  /** Where it came from, and its licence, in `ORIGIN.txt` beside the tree. */
  origin: string;
}

const SUITE = 'bookworm';
const MIRROR = 'http://deb.debian.org/debian';

export async function debianSource(source: DebianSource): Promise<FetchedSource> {
  const cache = path.join(repoRoot(), '.cache', 'oss-fixtures');
  const fixture = path.join(cache, `${source.name}-${source.version}`);
  const fetched = { tree: path.join(fixture, 'tree'), origin: path.join(fixture, 'ORIGIN.txt') };
  if (fs.existsSync(fetched.origin)) return fetched;
  try {
    const file = await upstreamTarball(path.join(cache, '.apt'), source);
    const partial = `${fixture}.partial`;
    fs.rmSync(partial, { recursive: true, force: true });
    fs.mkdirSync(path.join(partial, 'unpacked'), { recursive: true });
    const tarball = path.join(partial, file.name);
    fs.writeFileSync(tarball, await download(file.uri, file.sha256));
    execFileSync('tar', ['-xf', tarball, '-C', path.join(partial, 'unpacked')], { stdio: ['ignore', 'ignore', 'pipe'] });
    const [top, ...others] = fs.readdirSync(path.join(partial, 'unpacked'));
    if (!top || others.length > 0) throw new Error(`${file.name} holds more than one folder at its top`);
    fs.renameSync(path.join(partial, 'unpacked', top), path.join(partial, 'tree'));
    fs.rmSync(path.join(partial, 'unpacked'), { recursive: true });
    fs.rmSync(tarball);
    const licence = path.join(partial, 'tree', source.licence);
    if (!fs.existsSync(licence)) throw new Error(`${file.name} has no ${source.licence}`);
    fs.copyFileSync(licence, path.join(partial, `LICENCE-${path.basename(source.licence)}`));
    fs.writeFileSync(
      path.join(partial, 'ORIGIN.txt'),
      `${source.name} ${source.version}, Debian ${SUITE}: ${file.uri}\nsha256 ${file.sha256}\nlicence: tree/${source.licence} (a copy beside this file)\n`,
    );
    fs.rmSync(fixture, { recursive: true, force: true });
    fs.renameSync(partial, fixture);
    return fetched;
  } catch (error) {
    throw new Error(
      `could not fetch the Debian source package ${source.name}=${source.version} from ${MIRROR} (${SUITE}) into ${fixture}: ` +
        `these tests need apt-get and the Debian archive. ${(error as Error).message}`,
      { cause: error },
    );
  }
}

interface ArchiveFile {
  uri: string;
  name: string;
  sha256: string;
}

/** The source package's upstream tarball (`.orig.tar.*`, or the one tarball of a native package), as apt says. */
async function upstreamTarball(aptDir: string, source: DebianSource): Promise<ArchiveFile> {
  const apt = privateApt(aptDir);
  const hasIndex = () => fs.existsSync(apt.lists) && fs.readdirSync(apt.lists).some((name) => name.endsWith('_Sources'));
  if (!hasIndex()) apt.run(['update']);
  let files: ArchiveFile[];
  try {
    files = apt.uris(source);
  } catch {
    // A source index from before a point release: read it again.
    apt.run(['update']);
    files = apt.uris(source);
  }
  const upstream = files.find((file) => /\.orig\.tar\.[a-z0-9]+$/.test(file.name)) ?? files.find((file) => /\.tar\.[a-z0-9]+$/.test(file.name));
  if (!upstream) throw new Error(`apt lists no tarball for it: ${files.map((file) => file.name).join(', ')}`);
  return upstream;
}

/** apt with its own sources file, lists and cache under `dir`. */
function privateApt(dir: string): { lists: string; run: (args: string[]) => string; uris: (source: DebianSource) => ArchiveFile[] } {
  const lists = path.join(dir, 'lists');
  const cache = path.join(dir, 'cache');
  for (const folder of [path.join(lists, 'partial'), path.join(cache, 'archives', 'partial')]) fs.mkdirSync(folder, { recursive: true });
  const sourcesFile = path.join(dir, 'debian.sources');
  fs.writeFileSync(sourcesFile, `Types: deb-src\nURIs: ${MIRROR}\nSuites: ${SUITE}\nComponents: main\n`);
  const options = [
    `Dir::Etc::SourceList=${sourcesFile}`,
    'Dir::Etc::SourceParts=/nonexistent',
    `Dir::State::Lists=${lists}`,
    `Dir::Cache=${cache}`,
    // As root, apt would drop to `_apt` for downloads, who cannot write in this folder.
    `APT::Sandbox::User=${os.userInfo().username}`,
  ].flatMap((option) => ['-o', option]);
  const run = (args: string[], cwd = dir) => execFileSync('apt-get', [...options, ...args], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const uris = (source: DebianSource) => {
    // In an empty folder, so that apt lists every file rather than skip those it finds there.
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'codeloops-apt-'));
    try {
      const output = run(['--print-uris', 'source', `${source.name}=${source.version}`], empty);
      return [...output.matchAll(/^'([^']+)' (\S+) \d+ SHA256:([0-9a-f]{64})$/gm)].map(([, uri, name, sha256]) => ({
        uri: uri!,
        name: name!,
        sha256: sha256!,
      }));
    } finally {
      fs.rmSync(empty, { recursive: true, force: true });
    }
  };
  return { lists, run, uris };
}

async function download(uri: string, sha256: string): Promise<Buffer> {
  const response = await fetch(uri);
  if (!response.ok) throw new Error(`${uri}: HTTP ${response.status}`);
  const body = Buffer.from(await response.arrayBuffer());
  const actual = crypto.createHash('sha256').update(body).digest('hex');
  if (actual !== sha256) throw new Error(`${uri}: SHA-256 ${actual}, the archive says ${sha256}`);
  return body;
}

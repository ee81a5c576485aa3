import * as z from './zod.js';

/**
 * A sessions bundle (`codeloops sessions export <id…> -o bundle.tar.gz`): a gzipped
 * tar holding one folder, `codeloops-bundle/`, with
 *
 *     manifest.json          this file's schema
 *     sessions/<id>.jsonl    the session files, as written
 *     sidecars/<id>/…        their sidecar records and raw agent output
 *     groups/<group>/…       the records of the candidate groups they belong to
 *     snapshots.bundle       their snapshot refs (`refs/codeloops/<id>/…`) as a git bundle
 *
 * The git bundle leaves out what the repository's own branches, tags and remotes
 * hold: importing needs a clone of the same repository that has those commits.
 */

export const BUNDLE_ROOT = 'codeloops-bundle';
export const BUNDLE_MANIFEST = 'manifest.json';
export const BUNDLE_SNAPSHOTS = 'snapshots.bundle';

/** Where a working directory is inside its repository, to put it at the same place in another clone. */
const placement = {
  /** The working directory on the machine that exported it. */
  working_dir: z.string(),
  /** Its path from the top of its repository (`''`: the top itself), with forward slashes. */
  relative_dir: z.string(),
};

export const bundleManifestSchema = z.object({
  format: z.literal('codeloops-sessions'),
  version: z.literal(1),
  created_at: z.string(),
  sessions: z.array(z.object({ id: z.string(), ...placement, snapshot_refs: z.int().check(z.nonnegative()) })),
  groups: z.array(z.object({ id: z.string(), ...placement })),
});
export type BundleManifest = z.infer<typeof bundleManifestSchema>;

/** What `codeloops sessions import` did (`--json`). */
export const importResultSchema = z.object({
  sessions: z.array(z.string()),
  groups: z.array(z.string()),
  repository: z.string(),
  snapshot_refs: z.int(),
  warnings: z.array(z.string()),
});
export type ImportResult = z.infer<typeof importResultSchema>;

/** What `codeloops sessions export` wrote (`--json`). */
export const exportResultSchema = z.object({
  file: z.string(),
  sessions: z.array(z.string()),
  groups: z.array(z.string()),
  snapshot_refs: z.int(),
  bytes: z.int(),
  warnings: z.array(z.string()),
});
export type ExportResult = z.infer<typeof exportResultSchema>;

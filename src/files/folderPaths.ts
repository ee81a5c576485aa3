import path from 'node:path';

/**
 * Whether `target` is `folder` itself or lies inside it, by their names (no link is
 * followed: openRegularFile's `within` does that for what is opened). For paths that
 * come from input or from records, which must not lead out of their folder.
 */
export function isWithinFolder(folder: string, target: string): boolean {
  const relative = path.relative(folder, target);
  return relative === '' || (!relative.startsWith(`..${path.sep}`) && relative !== '..' && !path.isAbsolute(relative));
}

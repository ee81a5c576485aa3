/** Numbers and times the way people read them, for the terminal, the editor and the viewer. */

export function formatDuration(secs: number): string {
  if (secs < 60) return `${secs.toFixed(1)}s`;
  const minutes = Math.floor(secs / 60);
  if (minutes < 60) return `${minutes}m ${Math.floor(secs % 60)}s`;
  return `${Math.floor(minutes / 60)}h ${minutes % 60}m`;
}

export function formatCount(value: number): string {
  if (value < 1000) return String(value);
  // 120k, not 120.0k; 1.5k keeps its tenth.
  const scaled = (divisor: number, unit: string) => `${(value / divisor).toFixed(1).replace(/\.0$/, '')}${unit}`;
  return value < 999_950 ? scaled(1000, 'k') : scaled(1_000_000, 'M');
}

/** "3 minutes ago", from a timestamp and now. */
export function relativeTime(iso: string, now: number = Date.now()): string {
  const seconds = Math.round((now - Date.parse(iso)) / 1000);
  if (!Number.isFinite(seconds)) return iso;
  const units: Array<[number, string]> = [
    [60, 'second'],
    [60, 'minute'],
    [24, 'hour'],
    [30, 'day'],
    [12, 'month'],
  ];
  let value = Math.max(0, seconds);
  for (const [size, unit] of units) {
    if (value < size) return value <= 1 && unit === 'second' ? 'just now' : `${value} ${unit}${value === 1 ? '' : 's'} ago`;
    value = Math.floor(value / size);
  }
  return `${value} year${value === 1 ? '' : 's'} ago`;
}

/** Every line of a text indented, trailing whitespace dropped. */
export function indent(text: string, prefix = '  '): string {
  return text
    .trimEnd()
    .split('\n')
    .map((line) => `${prefix}${line}`)
    .join('\n');
}

/** `src/a.ts:42-44`, `src/a.ts:42`, `src/a.ts`: where in a file something points. */
export function fileLocation(file: string, line: number | null, endLine: number | null): string {
  return `${file}${line === null ? '' : `:${line}${endLine !== null && endLine !== line ? `-${endLine}` : ''}`}`;
}

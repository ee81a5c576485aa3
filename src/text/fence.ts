/** A Markdown code fence longer than any run of backticks inside, so quoted output cannot close it early. */
export function fence(body: string, language = ''): string {
  const longestRun = Math.max(2, ...[...body.matchAll(/`+/g)].map((match) => match[0].length));
  const marks = '`'.repeat(longestRun + 1);
  return `${marks}${language}\n${body}\n${marks}`;
}

// A lint rule of this project's own: a class body holds at most `max` lines of code
// (blank lines and comments aside), as max-lines-per-function holds a function. ESLint
// has no such rule, and a class that keeps growing is where a collaborator is missing:
// the loop's LoopRun grew to 634 code lines before its parts were handed out.

/** The lines a node's code tokens are on: a line of only blanks or comments has none. */
function codeLinesOf(sourceCode, node) {
  const lines = new Set();
  for (const token of sourceCode.getTokens(node)) {
    for (let line = token.loc.start.line; line <= token.loc.end.line; line++) lines.add(line);
  }
  return lines.size;
}

export const maxClassLines = {
  meta: {
    type: 'suggestion',
    docs: { description: 'A class body has at most `max` lines of code, blank lines and comments aside.' },
    messages: {
      tooLong: '{{name}} has too many lines ({{lines}}). Maximum allowed is {{max}}: hand a cohesive part of it to a collaborator.',
    },
    schema: [{ type: 'object', properties: { max: { type: 'integer', minimum: 1 } }, additionalProperties: false }],
  },
  create(context) {
    const max = context.options[0]?.max ?? 400;
    const check = (node) => {
      const lines = codeLinesOf(context.sourceCode, node.body);
      if (lines <= max) return;
      const name = node.id ? `Class '${node.id.name}'` : 'This class';
      context.report({ node: node.id ?? node, messageId: 'tooLong', data: { name, lines: String(lines), max: String(max) } });
    };
    return { ClassDeclaration: check, ClassExpression: check };
  },
};

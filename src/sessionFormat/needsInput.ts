import * as z from './zod.js';

/**
 * "Needs you": the critic (its decision `{"type":"blocked","question":"…"}`) or the
 * actor (its answer ending `<needs_input>…</needs_input>`) cannot go on without the
 * user: a secret it does not have, a decision only they can make. The iteration is
 * recorded as a CONTINUE with the extra field `needs_input` (older readers see a
 * CONTINUE), and the `needs_input` run event says it as it happens. The loop waits
 * for the answer where someone can give one (the editor's control channel, a
 * terminal); headless, it ends `failed` with `stop_reason` and `error_code`
 * `needs_input`, and `codeloops resume --answer` carries it on.
 */
/** Who asks: the critic, the actor, or the gate (the start's tests refuse DONE again: does the task change what they expect?). */
export const NEEDS_INPUT_FROM = ['critic', 'actor', 'gate'] as const;
export type NeedsInputFrom = (typeof NEEDS_INPUT_FROM)[number];

export const needsInputSchema = z.object({ from: z.enum(NEEDS_INPUT_FROM), question: z.string() });
export type NeedsInput = z.infer<typeof needsInputSchema>;

/** "the critic needs you: Which database should the app use?" (`sentence`: "The critic…", to stand alone). */
export function needsInputText(needs: NeedsInput, sentence = false): string {
  return `${sentence ? 'The' : 'the'} ${needs.from} needs you: ${needs.question}`;
}

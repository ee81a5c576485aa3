/** Exit codes of a loop (`codeloops run`, `codeloops resume`), one per outcome; 2 is also every usage or configuration error. */
export const EXIT_CODES = { success: 0, max_iterations_reached: 1, failed: 2, interrupted: 130 } as const;

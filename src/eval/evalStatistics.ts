/**
 * The two intervals an eval reports, written out rather than taken from a library:
 * they are short, and the README promises exactly these.
 *
 * Wilson's score interval for a proportion (Wilson 1927; Newcombe 1998, "Two-sided
 * confidence intervals for the single proportion", method 3), and Newcombe's hybrid
 * score interval for the difference of two independent proportions built from the
 * two Wilson intervals (Newcombe 1998, "Interval estimation for the difference
 * between independent proportions", method 10). Both stay inside [0, 1] (the
 * difference inside [-1, 1]) and behave at 0 and n successes, where the textbook
 * p ± z·√(p(1−p)/n) collapses to a point.
 */

/** The 97.5th percentile of the standard normal: a two-sided 95 % interval. */
const Z_95 = 1.959963984540054;

export type Interval = [low: number, high: number];

/** Wilson's 95 % interval for `successes` out of `trials`; null when there were no trials. */
export function wilsonInterval(successes: number, trials: number, z: number = Z_95): Interval | null {
  if (trials <= 0) return null;
  const p = successes / trials;
  const z2 = z * z;
  const denominator = 1 + z2 / trials;
  const centre = (p + z2 / (2 * trials)) / denominator;
  const halfWidth = (z * Math.sqrt((p * (1 - p)) / trials + z2 / (4 * trials * trials))) / denominator;
  return [Math.max(0, centre - halfWidth), Math.min(1, centre + halfWidth)];
}

/** Newcombe's 95 % interval for p₁ − p₂ (x₁ of n₁ against x₂ of n₂); null when either had no trials. */
export function newcombeInterval(x1: number, n1: number, x2: number, n2: number, z: number = Z_95): Interval | null {
  const first = wilsonInterval(x1, n1, z);
  const second = wilsonInterval(x2, n2, z);
  if (!first || !second) return null;
  const [l1, u1] = first;
  const [l2, u2] = second;
  const p1 = x1 / n1;
  const p2 = x2 / n2;
  const difference = p1 - p2;
  const below = Math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2);
  const above = Math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2);
  return [Math.max(-1, difference - below), Math.min(1, difference + above)];
}

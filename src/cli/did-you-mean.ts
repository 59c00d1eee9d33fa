// The closest known word to a mistyped one (`rnu` -> `run`), for the CLI's "did you mean" hint on unknown commands.
// Optimal-string-alignment distance: an adjacent swap counts as one edit, as commander counts it for flags.

/** Edits (insert, delete, substitute, swap two neighbours) that turn `a` into `b`. */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[rows - 1][cols - 1];
}

/**
 * The candidate closest to `word`, when it is close enough to be a typo (at most 40 % of the candidate's length in
 * edits, at least one), else null. Ties go to the earlier candidate.
 */
export function closestWord(word: string, candidates: readonly string[]): string | null {
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const distance = editDistance(word.toLowerCase(), candidate);
    if (distance < bestDistance && distance <= Math.max(1, Math.floor(candidate.length * 0.4))) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

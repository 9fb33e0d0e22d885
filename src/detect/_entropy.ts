/**
 * Shannon entropy of a string's characters, in bits per character: about 2.5
 * for English words, near 4 for hex and above 4.5 for random base64 of some
 * length.
 */
export function shannonEntropy(text: string): number {
  const length = text.length;
  if (length === 0) return 0;
  // Secrets are ASCII: count those in a reused table, anything else in a map.
  let others: Map<number, number> | undefined;
  for (let i = 0; i < length; i++) {
    const code = text.charCodeAt(i);
    if (code < 128) asciiCounts[code]!++;
    else (others ??= new Map()).set(code, (others.get(code) ?? 0) + 1);
  }
  let entropy = 0;
  const add = (count: number) => {
    const p = count / length;
    entropy -= p * Math.log2(p);
  };
  for (let i = 0; i < length; i++) {
    const code = text.charCodeAt(i);
    if (code < 128 && asciiCounts[code]! > 0) {
      add(asciiCounts[code]!);
      asciiCounts[code] = 0;
    }
  }
  if (others !== undefined) { for (const count of others.values()) add(count); }
  return entropy;
}

/** Counts of ASCII characters, all zero between calls. */
const asciiCounts = new Int32Array(128);

/**
 * Shannon entropy of a string's characters, in bits per character: about 2.5
 * for English words, near 4 for hex and above 4.5 for random base64 of some
 * length.
 */
export function shannonEntropy(text: string): number {
  const length = text.length;
  if (length === 0) return 0;
  const counts = new Map<number, number>();
  for (let i = 0; i < length; i++) {
    const code = text.charCodeAt(i);
    counts.set(code, (counts.get(code) ?? 0) + 1);
  }
  let entropy = 0;
  for (const count of counts.values()) {
    const p = count / length;
    entropy -= p * Math.log2(p);
  }
  return entropy;
}

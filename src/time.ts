/** Timestamps as the API writes them: RFC 3339 UTC with milliseconds. */
export function formatTimestamp(ms: number): string {
  return new Date(ms).toISOString();
}

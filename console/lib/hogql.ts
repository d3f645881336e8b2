// HogQL text the console writes for the query API: every user value a quoted literal, never query text.

/** A HogQL string literal: backslashes and quotes escaped. */
export function hogqlString(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`
}

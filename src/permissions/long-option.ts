/**
 * Long options as GNU getopt and git read them: any unambiguous abbreviation of a long
 * option is that option (`sort --out=F` is `sort --output=F`), so a gate that lists
 * dangerous options must treat every beginning of their names as the option itself.
 */

/** Whether `word` is a long option that is, or abbreviates, one of `names`. */
export function abbreviatesOption(word: string, names: readonly string[]): boolean {
  const match = /^--([^=]+)/.exec(word);
  if (match === null) return false;
  const given = match[1]!;
  return names.some((name) => name.startsWith(given));
}

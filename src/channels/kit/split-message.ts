/**
 * Cuts `text` into parts of at most `limit` characters: after the last line
 * break that fits, else after the last space, else at the limit (never inside
 * a surrogate pair). The break a part ends on is dropped, so joining the parts
 * with "\n" (or " ") gives the text back. Empty text is one empty part.
 */
export function splitMessage(text: string, limit: number): string[] {
  const parts: string[] = [];
  let rest = text;
  while (rest.length > limit) {
    const window = rest.slice(0, limit + 1);
    let cut = window.lastIndexOf("\n");
    if (cut <= 0) cut = window.lastIndexOf(" ");
    if (cut <= 0) {
      cut = limit;
      const code = rest.charCodeAt(cut - 1);
      if (code >= 0xd800 && code <= 0xdbff) cut -= 1;
      parts.push(rest.slice(0, cut));
      rest = rest.slice(cut);
    } else {
      parts.push(rest.slice(0, cut));
      rest = rest.slice(cut + 1);
    }
  }
  parts.push(rest);
  return parts;
}

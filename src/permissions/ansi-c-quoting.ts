const NAMED_ESCAPES: Record<string, string> = {
  n: "\n",
  t: "\t",
  r: "\r",
  e: "\x1b",
  E: "\x1b",
  a: "\x07",
  b: "\b",
  f: "\f",
  v: "\v",
};

/**
 * Reads bash's `$'...'` quoting starting at `start` (the `$`): the decoded
 * value (`\xHH`, octal, `\uHHHH`, `\n` and the like, `\'`) and the index just
 * past the closing quote. Decoding matters: `s$'\x75'do` runs sudo.
 */
export function readAnsiCQuoted(text: string, start: number): { value: string; end: number } {
  let value = "";
  let index = start + 2;
  while (index < text.length && text[index] !== "'") {
    const char = text[index]!;
    if (char !== "\\") {
      value += char;
      index += 1;
      continue;
    }
    const rest = text.slice(index + 1, index + 6);
    const numeric =
      /^x([0-9a-fA-F]{1,2})/.exec(rest) ??
      /^([0-7]{1,3})/.exec(rest) ??
      /^u([0-9a-fA-F]{1,4})/.exec(rest);
    if (numeric) {
      const radix = /^[xu]/.test(numeric[0]) ? 16 : 8;
      value += String.fromCharCode(Number.parseInt(numeric[1]!, radix));
      index += 1 + numeric[0].length;
    } else {
      const next = rest[0] ?? "";
      value += NAMED_ESCAPES[next] ?? next;
      index += 2;
    }
  }
  return { value, end: index + 1 };
}

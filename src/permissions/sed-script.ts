/**
 * Whether a sed invocation only prints: no `-i`, no script file, and every
 * script made of commands that neither write files (`w`, `s///w`) nor run
 * them (`e`, `s///e`). Reading files (`r`) is fine.
 */
export function sedIsReadOnly(args: string[]): boolean {
  const scripts: string[] = [];
  let sawExpression = false;
  const rest: string[] = [];
  for (let index = 0; index < args.length; index += 1) {
    const word = args[index]!;
    if (word === "--") {
      rest.push(...args.slice(index + 1));
      break;
    }
    if (word.startsWith("--")) {
      if (/^--(?:in-place|file)/.test(word)) return false;
      if (word.startsWith("--expression=")) {
        scripts.push(word.slice("--expression=".length));
        sawExpression = true;
      } else if (word === "--expression") {
        scripts.push(args[index + 1] ?? "");
        sawExpression = true;
        index += 1;
      } else if (
        !/^--(?:quiet|silent|regexp-extended|posix|separate|unbuffered|null-data|zero-terminated|debug|sandbox|line-length=\d+)$/.test(
          word,
        )
      ) {
        return false;
      }
    } else if (word.startsWith("-") && word.length > 1) {
      // A cluster such as `-ne`, `-l5`: `e` and `l` take the rest of the word, or the next one.
      const letters = word.slice(1);
      for (let at = 0; at < letters.length; at += 1) {
        const letter = letters[at]!;
        if (letter === "e" || letter === "l") {
          const value = at < letters.length - 1 ? letters.slice(at + 1) : (args[++index] ?? "");
          if (letter === "e") {
            sawExpression = true;
            scripts.push(value);
          }
          break;
        }
        if (!/[nrEsuz]/.test(letter)) return false;
      }
    } else {
      rest.push(word);
    }
  }
  if (!sawExpression) {
    if (rest.length === 0) return false;
    scripts.push(rest[0]!);
  }
  return scripts.every(scriptIsReadOnly);
}

const PLAIN_COMMANDS = new Set([
  "p",
  "d",
  "D",
  "n",
  "N",
  "P",
  "h",
  "H",
  "g",
  "G",
  "x",
  "=",
  "l",
  "q",
  "Q",
  "z",
  "F",
  "{",
  "}",
]);

function scriptIsReadOnly(script: string): boolean {
  let index = 0;
  const skipDelimited = (delimiter: string): void => {
    while (index < script.length && script[index] !== delimiter) {
      if (script[index] === "\\") index += 1;
      if (script[index] === "\n") return;
      index += 1;
    }
    index += 1;
  };
  while (index < script.length) {
    const char = script[index]!;
    if (/[\s;]/.test(char)) {
      index += 1;
      continue;
    }
    // Addresses: numbers, $, /regex/, \cregexc, first~step, +N, and a comma between two.
    if (/[0-9$,~+]/.test(char)) {
      index += 1;
      continue;
    }
    if (char === "/" || char === "\\") {
      const delimiter = char === "/" ? "/" : (script[index + 1] ?? "");
      index += char === "/" ? 1 : 2;
      skipDelimited(delimiter);
      while (/[IM]/.test(script[index] ?? "")) index += 1;
      continue;
    }
    if (char === "!") {
      index += 1;
      continue;
    }
    index += 1;
    if (PLAIN_COMMANDS.has(char)) continue;
    if (char === ":" || char === "b" || char === "t" || char === "T") {
      while (index < script.length && !/[;\n]/.test(script[index]!)) index += 1;
      continue;
    }
    if (char === "a" || char === "i" || char === "c" || char === "r" || char === "R") {
      while (index < script.length && script[index] !== "\n") index += 1;
      continue;
    }
    if (char === "y" || char === "s") {
      const delimiter = script[index] ?? "";
      if (delimiter === "" || delimiter === "\n" || delimiter === "\\") return false;
      index += 1;
      skipDelimited(delimiter);
      skipDelimited(delimiter);
      if (char === "s") {
        while (/[gpiImM0-9]/.test(script[index] ?? "")) index += 1;
        if (/[we]/.test(script[index] ?? "")) return false;
      }
      continue;
    }
    return false;
  }
  return true;
}

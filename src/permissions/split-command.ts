import { readAnsiCQuoted } from "./ansi-c-quoting.js";
import type { Redirect, SimpleCommand } from "./simple-command.js";
import { unwrapCommand } from "./unwrap-command.js";

export type { Redirect, SimpleCommand } from "./simple-command.js";

/** Nesting of scripts (`bash -c`, `eval`, backticks) and of parentheses beyond which a line is not judged. */
const MAX_DEPTH = 16;
const MAX_NESTING = 64;

/** Thrown for a line nested too deeply to judge; a caller should treat it as unknown (ask). */
export class CommandTooComplexError extends Error {
  constructor() {
    super("the command is nested too deeply to check");
    this.name = "CommandTooComplexError";
  }
}

/**
 * Splits a shell command line into the simple commands it would run: across
 * `&&`, `||`, `;`, `|`, `&`, newlines and subshells, and into `$(...)`,
 * backticks, `<(...)`, and the scripts of `bash -c`, `sh -c` and `eval`. Wrappers
 * such as `env`, `nohup`, `nice`, `time`, `timeout`, `command`, `exec` and
 * `xargs` are peeled off so the wrapped program is judged; `find -exec`
 * commands are listed too. Commands inside substitutions come before the
 * command that contains them. Words keep `$VAR` and `$(...)` as written.
 * Throws `CommandTooComplexError` for nesting too deep to judge.
 */
export function splitCommand(line: string, depth = 0): SimpleCommand[] {
  if (depth > MAX_DEPTH) throw new CommandTooComplexError();
  const parser = new CommandParser(line, depth);
  parser.parseList(false);
  return parser.commands.flatMap((command) => unwrapCommand(command, depth, splitCommand));
}

const OPERATOR_CHARS = new Set([";", "&", "|", "(", ")", "<", ">", "\n"]);
const BLANK = /[ \t\r]/;
const REDIRECT = /^(?:\d+|&)?(>>|>\||>&|>|<<<|<<-|<<|<>|<&|<)/;

class CommandParser {
  readonly commands: SimpleCommand[] = [];
  private index = 0;
  private nesting = 0;
  private readonly heredocs: {
    delimiter: string;
    stripTabs: boolean;
    expands: boolean;
    redirect: Redirect;
  }[] = [];

  constructor(
    private readonly text: string,
    private readonly depth: number,
  ) {}

  /** Parses until the end of the text, or past the `)` that closes a subshell or `$(`. */
  parseList(inParentheses: boolean): void {
    this.nesting += 1;
    if (this.nesting > MAX_NESTING) throw new CommandTooComplexError();
    try {
      this.parseListBody(inParentheses);
    } finally {
      this.nesting -= 1;
    }
  }

  private parseListBody(inParentheses: boolean): void {
    const text = this.text;
    let current: SimpleCommand = { argv: [], redirects: [] };
    const flush = (): void => {
      if (current.argv.length > 0 || current.redirects.length > 0) this.commands.push(current);
      current = { argv: [], redirects: [] };
    };
    while (this.index < text.length) {
      const char = text[this.index]!;
      if (BLANK.test(char)) {
        this.index += 1;
      } else if (char === "\\" && text[this.index + 1] === "\n") {
        this.index += 2;
      } else if (char === "#") {
        while (this.index < text.length && text[this.index] !== "\n") this.index += 1;
      } else if (char === "\n") {
        flush();
        this.index += 1;
        this.skipHeredocBodies();
      } else if (char === ")") {
        this.index += 1;
        flush();
        if (inParentheses) return;
      } else if (char === "(") {
        flush();
        this.index += 1;
        this.parseList(true);
      } else if (this.atRedirect()) {
        current.redirects.push(this.parseRedirect());
      } else if (char === ";" || char === "&" || char === "|") {
        flush();
        this.index += 1;
        const next = text[this.index];
        if (next === char || (char === "|" && next === "&") || (char === ";" && next === "&")) {
          this.index += 1;
        }
      } else {
        current.argv.push(this.parseWord());
      }
    }
    flush();
  }

  private atRedirect(): boolean {
    const match = REDIRECT.exec(this.text.slice(this.index, this.index + 12));
    if (!match) return false;
    const after = this.text[this.index + match[0].length];
    // `<(` and `>(` are process substitutions, read as words.
    return !((match[1] === "<" || match[1] === ">") && after === "(");
  }

  private parseRedirect(): Redirect {
    const match = REDIRECT.exec(this.text.slice(this.index, this.index + 12))!;
    const op = match[1]!;
    this.index += match[0].length;
    while (this.index < this.text.length && BLANK.test(this.text[this.index]!)) this.index += 1;
    const start = this.index;
    const target = this.parseWord();
    const redirect: Redirect = { op, target };
    if (op === "<<<") redirect.body = target;
    if (op === "<<" || op === "<<-") {
      const raw = this.text.slice(start, this.index);
      this.heredocs.push({
        delimiter: target,
        stripTabs: op === "<<-",
        expands: !/['"\\]/.test(raw),
        redirect,
      });
    }
    return redirect;
  }

  /** Reads one word up to an unquoted blank or operator, removing quotes. */
  parseWord(): string {
    const text = this.text;
    let word = "";
    while (this.index < text.length) {
      const char = text[this.index]!;
      if (BLANK.test(char) || OPERATOR_CHARS.has(char)) {
        const processSubstitution = (char === "<" || char === ">") && text[this.index + 1] === "(";
        if (!processSubstitution) break;
        const start = this.index;
        this.index += 2;
        this.parseList(true);
        word += text.slice(start, this.index);
      } else if (char === "\\") {
        if (text[this.index + 1] !== "\n") word += text[this.index + 1] ?? "";
        this.index += 2;
      } else if (char === "'") {
        const end = text.indexOf("'", this.index + 1);
        const stop = end === -1 ? text.length : end;
        word += text.slice(this.index + 1, stop);
        this.index = stop + 1;
      } else if (char === '"') {
        word += this.parseDoubleQuoted();
      } else if (char === "$" && text[this.index + 1] === "'") {
        word += this.parseAnsiQuoted();
      } else if (char === "$" || char === "`") {
        word += this.parseExpansion();
      } else {
        word += char;
        this.index += 1;
      }
    }
    return word;
  }

  private parseDoubleQuoted(): string {
    const text = this.text;
    let value = "";
    this.index += 1;
    while (this.index < text.length && text[this.index] !== '"') {
      const char = text[this.index]!;
      if (char === "\\" && /[$`"\\\n]/.test(text[this.index + 1] ?? "")) {
        if (text[this.index + 1] !== "\n") value += text[this.index + 1];
        this.index += 2;
      } else if (char === "$" || char === "`") {
        value += this.parseExpansion();
      } else {
        value += char;
        this.index += 1;
      }
    }
    this.index += 1;
    return value;
  }

  private parseAnsiQuoted(): string {
    const quoted = readAnsiCQuoted(this.text, this.index);
    this.index = quoted.end;
    return quoted.value;
  }

  /**
   * `$(...)` and backticks (their commands are collected), `$((...))`, `${...}`
   * and `$NAME`; returns the text as written.
   */
  private parseExpansion(): string {
    const text = this.text;
    const start = this.index;
    if (text[start] === "`") {
      let inner = "";
      this.index += 1;
      while (this.index < text.length && text[this.index] !== "`") {
        if (text[this.index] === "\\" && /[`\\$]/.test(text[this.index + 1] ?? "")) this.index += 1;
        inner += text[this.index];
        this.index += 1;
      }
      this.index += 1;
      if (this.depth >= MAX_DEPTH) throw new CommandTooComplexError();
      const parser = new CommandParser(inner, this.depth + 1);
      parser.parseList(false);
      this.commands.push(...parser.commands);
    } else if (text.startsWith("$((", start)) {
      this.index = closingIndex(text, start + 1, "(", ")");
    } else if (text[start + 1] === "(") {
      this.index += 2;
      this.parseList(true);
    } else if (text[start + 1] === "{") {
      this.index = closingIndex(text, start + 1, "{", "}");
    } else {
      this.index += 1;
      while (this.index < text.length && /[A-Za-z0-9_]/.test(text[this.index]!)) this.index += 1;
      if (this.index === start + 1 && /[@*#?$!0-9-]/.test(text[this.index] ?? "")) this.index += 1;
    }
    return text.slice(start, this.index);
  }

  private skipHeredocBodies(): void {
    for (const heredoc of this.heredocs.splice(0)) {
      const bodyStart = this.index;
      heredoc.redirect.body = this.text.slice(bodyStart);
      while (this.index < this.text.length) {
        const lineEnd = this.text.indexOf("\n", this.index);
        const end = lineEnd === -1 ? this.text.length : lineEnd;
        let line = this.text.slice(this.index, end);
        if (heredoc.stripTabs) line = line.replace(/^\t+/, "");
        const bodyEnd = this.index;
        this.index = end + 1;
        if (line === heredoc.delimiter) {
          heredoc.redirect.body = this.text.slice(bodyStart, bodyEnd);
          if (heredoc.expands) this.collectSubstitutions(this.text.slice(bodyStart, bodyEnd));
          break;
        }
      }
    }
  }

  /** The commands of `$(...)` and backticks in an expanding heredoc body. */
  private collectSubstitutions(body: string): void {
    const parser = new CommandParser(body, this.depth + 1);
    while (parser.index < body.length) {
      const char = body[parser.index];
      if (char === "\\") parser.index += 2;
      else if (char === "$" || char === "`") parser.parseExpansion();
      else parser.index += 1;
    }
    this.commands.push(...parser.commands);
  }
}

/** Index just past the bracket that closes the one at `open`. */
function closingIndex(text: string, open: number, opener: string, closer: string): number {
  let depth = 0;
  for (let index = open; index < text.length; index += 1) {
    const char = text[index];
    if (char === "\\") index += 1;
    else if (char === opener) depth += 1;
    else if (char === closer) {
      depth -= 1;
      if (depth === 0) return index + 1;
    }
  }
  return text.length;
}

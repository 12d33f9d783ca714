/**
 * What the gate knows of a command line's variables: which it may read without knowing
 * their value (the environment's plain facts, `$?`), which the line itself sets (their
 * value is whatever the line made it, so not known), and which only a `for` list sets
 * (their values are the list's words, judged as words of their own).
 */
import type { SyntaxNode } from "./bash-parser.js";

/**
 * Environment variables whose value cannot turn a read into a leak or a run: facts of the
 * session (`$USER`, `$PPID`) and the two folders the gate resolves itself (`$HOME`, `$PWD`).
 */
const ENVIRONMENT = new Set(
  (
    "HOME PWD USER LOGNAME HOSTNAME UID EUID PPID BASHPID RANDOM SECONDS LINENO SHLVL COLUMNS " +
    "LINES TERM LANG OSTYPE HOSTTYPE MACHTYPE BASH_VERSION PATH SHELL"
  ).split(" "),
);
/** `$?`, `$#`, `$$`, `$!`, `$-`, `$0`, and positional parameters (empty at the top of `bash -c`). */
const SPECIAL = /^(?:[?#$!\-@*]|\d+)$/;
/** Commands whose words name variables they set. */
const SETTERS = new Set([
  "read",
  "readarray",
  "mapfile",
  "printf",
  "declare",
  "typeset",
  "local",
  "export",
  "readonly",
  "let",
  "getopts",
  "unset",
  "wait",
]);

const SETTING_NODES = new Set(["command", "declaration_command", "unset_command"]);

export class LineVariables {
  private readonly assigned = new Set<string>();
  private readonly looped = new Set<string>();

  /** Reads the whole tree once, before any command is judged. */
  constructor(root: SyntaxNode) {
    // A stack, not recursion: a line may nest thousands deep (the walker refuses it later).
    const stack: SyntaxNode[] = [root];
    for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
      this.note(node);
      for (const child of node.namedChildren) if (child !== null) stack.push(child);
    }
  }

  private note(node: SyntaxNode): void {
    if (node.type === "variable_assignment") {
      this.assigned.add(nameOf(node.childForFieldName("name")?.text ?? ""));
    } else if (node.type === "for_statement") {
      const variable = node.childForFieldName("variable")?.text;
      if (variable !== undefined) this.looped.add(variable);
    } else if (node.type === "c_style_for_statement") {
      for (const child of node.descendantsOfType(["variable_name", "word"])) {
        if (child !== null) this.assigned.add(child.text);
      }
    } else if (SETTING_NODES.has(node.type)) {
      const name =
        node.type === "command" ? node.childForFieldName("name")?.text : node.child(0)?.text;
      if (name === undefined || !SETTERS.has(name)) return;
      for (const child of node.namedChildren) {
        const match = /^[A-Za-z_]\w*/.exec((child?.text ?? "").replace(/^['"]/, ""));
        if (match) this.assigned.add(match[0]);
      }
    }
  }

  /**
   * Whether reading `name` keeps the word understood. In arithmetic a value is evaluated
   * as an expression (a value `a[$(cmd)]` runs cmd), so only the environment's plain facts do.
   */
  known(name: string, inArithmetic: boolean): boolean {
    if (SPECIAL.test(name)) return true;
    if (this.assigned.has(name)) return false;
    if (this.looped.has(name)) return !inArithmetic;
    return ENVIRONMENT.has(name);
  }
}

function nameOf(text: string): string {
  const bracket = text.indexOf("[");
  return bracket === -1 ? text : text.slice(0, bracket);
}

/**
 * Reads tree-sitter-bash's tree of a command line into the simple commands it runs, in the
 * order their results are needed (the commands of a substitution before the command that
 * uses it), each with its words as bash would pass them and a note of the first word the
 * gate does not fully understand (an expansion that runs code, or whose value it cannot know).
 */
import type { SyntaxNode } from "./bash-parser.js";
import { type ExpansionHost, ExpansionJudge } from "./expansion-judge.js";
import type { LineVariables } from "./line-variables.js";
import { type ExpandedWord, expandWord, outermostExpansions } from "./shell-word.js";
import type { Redirect, SimpleCommand } from "./simple-command.js";

/** Thrown for a line the gate does not read (a syntax error, or nesting too deep); judge it as unknown. */
export class CommandTooComplexError extends Error {
  constructor(message = "the command is nested too deeply to check") {
    super(message);
    this.name = "CommandTooComplexError";
  }
}

const MAX_NESTING = 64;
const ARITHMETIC_COMPARISON = /^-(?:eq|ne|lt|le|gt|ge)$/;
const TEST_WORDS = new Set([
  "word",
  "string",
  "raw_string",
  "ansi_c_string",
  "concatenation",
  "simple_expansion",
  "expansion",
  "command_substitution",
  "process_substitution",
  "arithmetic_expansion",
  "number",
  "regex",
  "extglob_pattern",
  "test_operator",
]);

export class SyntaxTreeCommands implements ExpansionHost {
  readonly commands: SimpleCommand[] = [];
  private nesting = 0;
  /** Why a word of the command being read is not understood; set by the first such word. */
  private unknown: string | undefined;
  private globbed: string[] = [];

  private readonly judge = new ExpansionJudge(this);

  constructor(
    private readonly line: string,
    readonly variables: LineVariables,
  ) {}

  statement(node: SyntaxNode): void {
    this.nesting += 1;
    if (this.nesting > MAX_NESTING) throw new CommandTooComplexError();
    try {
      this.statementBody(node);
    } finally {
      this.nesting -= 1;
    }
  }

  private statementBody(node: SyntaxNode): void {
    switch (node.type) {
      case "comment":
        return;
      case "command":
        this.command(node, []);
        return;
      case "redirected_statement":
        this.redirected(node);
        return;
      case "variable_assignment":
      case "variable_assignments":
        this.read(() => ({ argv: this.assignments(node), redirects: [] }));
        return;
      case "declaration_command":
      case "unset_command":
        this.read(() => ({
          argv: node.namedChildren.flatMap((child) => (child === null ? [] : this.words(child))),
          redirects: [],
        }));
        return;
      case "test_command":
        this.read(() => ({ argv: this.testWords(node), redirects: [] }));
        return;
      case "for_statement":
        this.read(() => ({
          argv: [
            "for",
            ...node.childrenForFieldName("value").flatMap((value) => this.words(value)),
          ],
          redirects: [],
        }));
        this.children(node.childForFieldName("body"));
        return;
      case "c_style_for_statement":
        this.read(() => {
          for (const field of ["initializer", "condition", "update"]) {
            for (const part of node.childrenForFieldName(field)) this.judge.arithmetic(part);
          }
          return { argv: [], redirects: [] };
        });
        this.children(node.childForFieldName("body"));
        return;
      case "case_statement":
        this.read(() => ({ argv: [], redirects: [], ...this.caseWords(node) }));
        for (const item of node.namedChildren) {
          if (item?.type !== "case_item") continue;
          for (const child of item.namedChildren) {
            if (
              child !== null &&
              item.childrenForFieldName("value").every((value) => value.id !== child.id)
            ) {
              this.statement(child);
            }
          }
        }
        return;
      case "compound_statement":
        if (node.text.startsWith("((")) {
          this.read(() => {
            this.judge.arithmetic(node);
            return { argv: [], redirects: [] };
          });
          return;
        }
        this.children(node);
        return;
      case "function_definition":
        this.children(node.childForFieldName("body"));
        return;
      default:
        this.children(node);
        return;
    }
  }

  children(node: SyntaxNode | null): void {
    for (const child of node?.namedChildren ?? []) if (child !== null) this.statement(child);
  }

  /** Builds one command, noting its not-understood words, and pushes it after its substitutions'. */
  read(build: () => SimpleCommand): void {
    const saved = { unknown: this.unknown, globbed: this.globbed };
    this.unknown = undefined;
    this.globbed = [];
    try {
      const command = build();
      if (this.unknown !== undefined) command.unknown = this.unknown;
      if (this.globbed.length > 0) command.globbed = this.globbed;
      this.commands.push(command);
    } finally {
      this.unknown = saved.unknown;
      this.globbed = saved.globbed;
    }
  }

  flag(reason: string): void {
    this.unknown ??= reason;
  }

  /** A simple command; `outer` are the redirections written after it (`cmd args > out`). */
  private command(node: SyntaxNode, outer: SyntaxNode[], after: SyntaxNode[] = []): void {
    this.read(() => {
      const argv: string[] = [];
      const redirects: Redirect[] = [];
      let previousEnd = -1;
      for (const child of node.namedChildren) {
        if (child === null) continue;
        if (child.type === "variable_assignment") {
          argv.push(...this.assignments(child));
        } else if (/redirect$/.test(child.type)) {
          redirects.push(this.redirect(child, after));
        } else if (child.type !== "comment") {
          const words = this.words(
            child.type === "command_name" ? (child.firstNamedChild ?? child) : child,
          );
          // `a\<newline>b` is one word to bash; the grammar reads two.
          const continued = this.line.slice(previousEnd, child.startIndex) === "\\\n";
          if (previousEnd !== -1 && continued && argv.length > 0) {
            argv[argv.length - 1] += words.shift() ?? "";
          }
          argv.push(...words);
          previousEnd = child.endIndex;
        }
      }
      for (const child of outer) redirects.push(this.redirect(child, after));
      return { argv, redirects };
    });
    for (const statement of after.splice(0)) this.statement(statement);
  }

  private redirected(node: SyntaxNode): void {
    const body = node.childForFieldName("body");
    const redirectNodes = node.namedChildren.filter(
      (child): child is SyntaxNode =>
        child !== null && child.id !== body?.id && /redirect$/.test(child.type),
    );
    if (body?.type === "command") {
      this.command(body, redirectNodes);
      return;
    }
    if (body !== null) this.statement(body);
    const after: SyntaxNode[] = [];
    this.read(() => ({
      argv: [],
      redirects: redirectNodes.map((child) => this.redirect(child, after)),
    }));
    for (const statement of after) this.statement(statement);
  }

  redirect(node: SyntaxNode, after: SyntaxNode[]): Redirect {
    const descriptor = node.childForFieldName("descriptor");
    if (node.type === "heredoc_redirect") {
      const start = node.namedChildren.find((child) => child?.type === "heredoc_start");
      const body = node.namedChildren.find((child) => child?.type === "heredoc_body");
      for (const child of node.namedChildren) {
        if (child !== null && !/^heredoc_/.test(child.type) && child.id !== descriptor?.id)
          after.push(child);
      }
      const delimiter = (start?.text ?? "").replace(/['"\\]/g, "");
      const stripTabs = /<<-/.test(
        this.line.slice(node.startIndex, start?.startIndex ?? node.endIndex),
      );
      let text = body?.text ?? "";
      if (stripTabs) text = text.replace(/^\t+/gm, "");
      if (body !== undefined && body !== null)
        for (const expansion of outermostExpansions(body)) this.judge.expansion(expansion, false);
      return { op: stripTabs ? "<<-" : "<<", target: delimiter, body: text };
    }
    const destination =
      node.childForFieldName("destination") ??
      node.namedChildren.find((child) => child?.id !== descriptor?.id) ??
      null;
    const target = destination === null ? "" : (this.words(destination)[0] ?? "");
    if (node.type === "herestring_redirect") return { op: "<<<", target, body: target };
    const opStart = descriptor?.endIndex ?? node.startIndex;
    const op = this.line
      .slice(opStart, destination?.startIndex ?? node.endIndex)
      .trim()
      .replace(/^&(?=>)/, "");
    return { op, target };
  }

  /** The words a word node becomes, with its expansions judged and its globs noted. */
  private words(node: SyntaxNode): string[] {
    let expanded: ExpandedWord[];
    try {
      expanded = expandWord(node, this.line, (expansion) => this.judge.expansion(expansion, false));
    } catch (error) {
      if (error instanceof Error && error.name === "TooManyWordsError") {
        this.flag(error.message);
        return [node.text];
      }
      throw error;
    }
    for (const word of expanded) if (word.glob) this.globbed.push(word.value);
    return expanded.map((word) => word.value);
  }

  private assignments(node: SyntaxNode): string[] {
    if (node.type === "variable_assignments") {
      return node.namedChildren.flatMap((child) => (child === null ? [] : this.assignments(child)));
    }
    const name = node.childForFieldName("name");
    if (name?.type === "subscript") this.judge.subscript(name);
    const value = node.childForFieldName("value");
    const words = value === null ? [""] : this.words(value);
    return [
      `${node.text.slice(0, (value?.startIndex ?? node.endIndex) - node.startIndex)}${words.join(" ")}`,
    ];
  }

  private caseWords(node: SyntaxNode): Partial<SimpleCommand> {
    const value = node.childForFieldName("value");
    if (value !== null) this.words(value);
    for (const item of node.namedChildren) {
      if (item?.type === "case_item")
        for (const pattern of item.childrenForFieldName("value")) this.words(pattern);
    }
    return {};
  }

  /** `[ ... ]` and `[[ ... ]]` as words; `[[`'s arithmetic comparisons evaluate their operands as code. */
  private testWords(node: SyntaxNode): string[] {
    const double = node.text.startsWith("[[");
    const words: string[] = [double ? "[[" : "["];
    const visit = (current: SyntaxNode): void => {
      for (const child of current.namedChildren) {
        if (child === null) continue;
        if (child.type === "binary_expression" && double) this.comparison(child);
        if (child.type === "test_operator") words.push(child.text);
        else if (TEST_WORDS.has(child.type)) words.push(...this.words(child));
        else visit(child);
      }
    };
    visit(node);
    const variableTest = words.indexOf("-v");
    if (variableTest !== -1 && /\[/.test(words[variableTest + 1] ?? "")) {
      this.flag("-v with an array subscript evaluates the subscript as code");
    }
    return [...words, double ? "]]" : "]"];
  }

  private comparison(node: SyntaxNode): void {
    const operator = node.childForFieldName("operator");
    if (operator === null || !ARITHMETIC_COMPARISON.test(operator.text)) return;
    for (const side of [node.childForFieldName("left"), node.childForFieldName("right")]) {
      if (side === null || side.type === "number" || /^-?\d+$/.test(side.text)) continue;
      if (side.type === "simple_expansion" || side.type === "expansion")
        this.judge.expansion(side, true);
      else
        this.flag(
          `[[ ${operator.text} ]] evaluates ${side.text} as arithmetic, which can run code`,
        );
    }
  }
}

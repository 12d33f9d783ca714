/**
 * Judges the expansions of a command line as bash performs them: a command substitution runs
 * its commands (read as commands of their own) and yields output the gate cannot know; an
 * arithmetic context evaluates variables' values as expressions (a value `a[$(cmd)]` runs
 * cmd); `${...}` may be indirect, transforming (`@P` runs code), subscripted or offset.
 */
import type { SyntaxNode } from "./bash-parser.js";
import type { LineVariables } from "./line-variables.js";
import { outermostExpansions } from "./shell-word.js";
import type { Redirect, SimpleCommand } from "./simple-command.js";

/** What the judge needs of the reader that walks the line. */
export interface ExpansionHost {
  readonly variables: LineVariables;
  /** Notes why the command being read is not understood (the first reason wins). */
  flag(reason: string): void;
  statement(node: SyntaxNode): void;
  children(node: SyntaxNode | null): void;
  read(build: () => SimpleCommand): void;
  redirect(node: SyntaxNode, after: SyntaxNode[]): Redirect;
}

export class ExpansionJudge {
  constructor(private readonly host: ExpansionHost) {}

  expansion(node: SyntaxNode, inArithmetic: boolean): void {
    switch (node.type) {
      case "command_substitution":
        this.host.flag(`${node.text} runs a command whose output the gate cannot know`);
        for (const child of node.namedChildren) {
          if (child === null) continue;
          if (/redirect$/.test(child.type)) {
            const after: SyntaxNode[] = [];
            this.host.read(() => ({ argv: [], redirects: [this.host.redirect(child, after)] }));
          } else this.host.statement(child);
        }
        return;
      case "process_substitution":
        this.host.children(node);
        return;
      case "arithmetic_expansion":
        this.arithmetic(node);
        return;
      case "simple_expansion": {
        const name = node.text.slice(1);
        if (!this.host.variables.known(name, inArithmetic))
          this.host.flag(`the value of $${name} is not known to the gate`);
        return;
      }
      case "expansion":
        this.parameter(node, inArithmetic);
        return;
    }
  }

  /** `${...}`: indirect, transforming (`@P` runs code) and subscripted forms are not understood. */
  private parameter(node: SyntaxNode, inArithmetic: boolean): void {
    const text = node.text;
    const match = /^\$\{(!?)(#?)([A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-])/.exec(text);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion, not a template
    if (text === "${#}") return;
    if (match === null) {
      this.host.flag(`${text} is an expansion the gate cannot read`);
      return;
    }
    if (match[1] === "!") {
      this.host.flag(`${text} expands a variable named by another`);
      return;
    }
    let rest = text.slice(match[0].length, -1);
    if (rest.startsWith("[")) {
      if (!/^\[(?:[@*]|\d+)\]/.test(rest))
        this.host.flag(`${text}: an array subscript is evaluated as code`);
      rest = rest.slice(rest.indexOf("]") + 1);
    }
    if (rest.startsWith("@")) this.host.flag(`${text} transforms the value (\${x@P} runs code)`);
    if (/^:(?![-=+?])/.test(rest) && /[A-Za-z_$`(]/.test(rest))
      this.host.flag(`${text}: an offset is evaluated as code`);
    if (!this.host.variables.known(match[3]!, inArithmetic))
      this.host.flag(`the value of ${text} is not known to the gate`);
    for (const child of node.namedChildren) {
      if (child === null) continue;
      if (child.type === "subscript") this.subscript(child);
      else for (const inner of outermostExpansions(child)) this.expansion(inner, inArithmetic);
    }
  }

  subscript(node: SyntaxNode): void {
    const index = node.childForFieldName("index");
    if (index !== null && !/^(?:[@*]|\d+)$/.test(index.text)) {
      this.host.flag(`${node.text}: an array subscript is evaluated as code`);
    }
    if (index !== null) this.arithmetic(index);
  }

  /** An arithmetic context: substitutions run, and variables are evaluated as expressions. */
  arithmetic(node: SyntaxNode): void {
    const visit = (current: SyntaxNode): void => {
      if (
        current.type === "command_substitution" ||
        current.type === "expansion" ||
        current.type === "simple_expansion"
      ) {
        this.expansion(current, true);
        return;
      }
      if (current.type === "subscript") {
        this.subscript(current);
        return;
      }
      if (
        (current.type === "variable_name" || current.type === "word") &&
        /^[A-Za-z_]\w*$/.test(current.text)
      ) {
        if (!this.host.variables.known(current.text, true))
          this.host.flag(`arithmetic evaluates the value of ${current.text} as code`);
        return;
      }
      for (const child of current.namedChildren) if (child !== null) visit(child);
    };
    visit(node);
  }
}

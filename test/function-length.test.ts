/**
 * No function in src over 150 lines (STYLE.md 16: long work reads as named phases). Every
 * function declaration, method, accessor, constructor, function expression and arrow function
 * is measured from its first line to its last, nested ones on their own; a long one fails
 * here, named with its file and line.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const sourceRoot = join(import.meta.dirname, "..", "src");
const MAX_LINES = 150;

function listSources(directory: string): string[] {
  return readdirSync(directory).flatMap((name) => {
    const path = join(directory, name);
    if (statSync(path).isDirectory()) return listSources(path);
    return path.endsWith(".ts") ? [path] : [];
  });
}

interface Measured {
  name: string;
  line: number;
  lines: number;
}

/** What a function is called where it stands: its own name, its variable's, its property's. */
function functionName(node: ts.FunctionLikeDeclaration, source: ts.SourceFile): string {
  if (ts.isConstructorDeclaration(node)) return "constructor";
  if (node.name !== undefined) return node.name.getText(source);
  const parent = node.parent;
  if (
    ts.isVariableDeclaration(parent) ||
    ts.isPropertyAssignment(parent) ||
    ts.isPropertyDeclaration(parent)
  ) {
    return parent.name.getText(source);
  }
  if (ts.isCallExpression(parent))
    return `(callback of ${parent.expression.getText(source).slice(0, 40)})`;
  return "(anonymous)";
}

/** Every function-like node of a file's text with its length in lines. */
function measureFunctions(fileName: string, text: string): Measured[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const measured: Measured[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && "body" in node && node.body !== undefined) {
      const declaration = node as ts.FunctionLikeDeclaration;
      const first = source.getLineAndCharacterOfPosition(declaration.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(declaration.getEnd()).line;
      measured.push({
        name: functionName(declaration, source),
        line: first + 1,
        lines: last - first + 1,
      });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return measured;
}

describe("function length", () => {
  it("measures declarations, methods, arrows and nested functions on their own", () => {
    const body = (count: number) =>
      Array.from({ length: count }, (_, index) => `  step(${index});`).join("\n");
    const text = [
      `export function outer() {\n${body(3)}\n  const inner = () => {\n${body(4)}\n  };\n}`,
      `class Keeper {\n  run(): void {\n${body(2)}\n  }\n}`,
      `items.forEach(function (item) {\n${body(1)}\n});`,
    ].join("\n");
    expect(measureFunctions("x.ts", text).map(({ name, lines }) => `${name}:${lines}`)).toEqual([
      "outer:11",
      "inner:6",
      "run:4",
      "(callback of items.forEach):3",
    ]);
  });

  it(`none in src over ${MAX_LINES} lines`, () => {
    const long: string[] = [];
    for (const file of listSources(sourceRoot)) {
      const path = relative(sourceRoot, file).split(sep).join("/");
      for (const { name, line, lines } of measureFunctions(file, readFileSync(file, "utf8"))) {
        if (lines > MAX_LINES) long.push(`src/${path}:${line} ${name} (${lines} lines)`);
      }
    }
    expect(long, `functions over ${MAX_LINES} lines:\n${long.join("\n")}`).toEqual([]);
  });
});

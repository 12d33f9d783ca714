/**
 * No import circle anywhere in src, type-only imports included: a circle means two modules
 * cannot be read (or moved) one without the other. The graph counts static `import` and
 * `export ... from`, `import type`, and dynamic `import()`; a circle fails here, named.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const sourceRoot = join(import.meta.dirname, "..", "src");

function listSources(directory: string): string[] {
  return readdirSync(directory).flatMap((name) => {
    const path = join(directory, name);
    if (statSync(path).isDirectory()) return listSources(path);
    return path.endsWith(".ts") ? [path] : [];
  });
}

function moduleName(path: string): string {
  return relative(sourceRoot, path).split(sep).join("/");
}

/** The relative specifiers a file's text imports, by any of the forms above (and `import("x").T`). */
function importedSpecifiers(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest);
  const specifiers: string[] = [];
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier !== undefined &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      specifiers.push(node.moduleSpecifier.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] !== undefined &&
      ts.isStringLiteralLike(node.arguments[0])
    ) {
      specifiers.push(node.arguments[0].text);
    } else if (
      ts.isImportTypeNode(node) &&
      ts.isLiteralTypeNode(node.argument) &&
      ts.isStringLiteral(node.argument.literal)
    ) {
      specifiers.push(node.argument.literal.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return specifiers.filter((specifier) => specifier.startsWith("."));
}

/** src-relative module -> the src-relative modules it imports. */
function buildImportGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of listSources(sourceRoot)) {
    const targets = importedSpecifiers(file, readFileSync(file, "utf8")).map((specifier) =>
      moduleName(resolve(dirname(file), specifier.replace(/\.js$/, ".ts"))),
    );
    graph.set(moduleName(file), [...new Set(targets)]);
  }
  return graph;
}

/** Every strongly connected component of more than one module (or a module importing itself). */
function findCircles(graph: Map<string, string[]>): string[][] {
  // Tarjan's algorithm, iterative so a deep chain cannot overflow the stack.
  const index = new Map<string, number>();
  const lowLink = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const circles: string[][] = [];
  let counter = 0;
  for (const root of graph.keys()) {
    if (index.has(root)) continue;
    const work: { module: string; next: number }[] = [{ module: root, next: 0 }];
    index.set(root, counter);
    lowLink.set(root, counter);
    counter += 1;
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1] as { module: string; next: number };
      const targets = (graph.get(frame.module) ?? []).filter((target) => graph.has(target));
      if (frame.next < targets.length) {
        const target = targets[frame.next] as string;
        frame.next += 1;
        if (!index.has(target)) {
          index.set(target, counter);
          lowLink.set(target, counter);
          counter += 1;
          stack.push(target);
          onStack.add(target);
          work.push({ module: target, next: 0 });
        } else if (onStack.has(target)) {
          lowLink.set(
            frame.module,
            Math.min(lowLink.get(frame.module) ?? 0, index.get(target) ?? 0),
          );
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent !== undefined) {
        lowLink.set(
          parent.module,
          Math.min(lowLink.get(parent.module) ?? 0, lowLink.get(frame.module) ?? 0),
        );
      }
      if (lowLink.get(frame.module) === index.get(frame.module)) {
        const component: string[] = [];
        let member: string | undefined;
        do {
          member = stack.pop() as string;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.module);
        const selfImport = (graph.get(frame.module) ?? []).includes(frame.module);
        if (component.length > 1 || selfImport) circles.push(component.sort());
      }
    }
  }
  return circles;
}

/** One path around a circle, for the message: a -> b -> ... -> a. */
function describeCircle(graph: Map<string, string[]>, members: string[]): string {
  const inside = new Set(members);
  const start = members[0] as string;
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const module = queue.shift() as string;
    for (const target of graph.get(module) ?? []) {
      if (!inside.has(target)) continue;
      if (target === start) {
        const path = [start];
        for (
          let step: string | undefined = module;
          step !== undefined && step !== start;
          step = previous.get(step)
        ) {
          path.splice(1, 0, step);
        }
        const around = [...path, start].join(" -> ");
        const others = members.filter((member) => !path.includes(member));
        return others.length === 0 ? around : `${around} (with ${others.join(", ")})`;
      }
      if (!previous.has(target)) {
        previous.set(target, module);
        queue.push(target);
      }
    }
  }
  return members.join(" <-> ");
}

describe("import circles", () => {
  it("reads static, type-only, re-exported and dynamic imports, and no package ones", () => {
    const text = [
      'import { a } from "./a.js";',
      'import type { B } from "../b.js";',
      'export { c } from "./c.js";',
      'export type * from "./d.js";',
      'const e = await import("./e.js");',
      'type F = import("./f.js").F;',
      'import pg from "pg";',
      "// import { g } from './g.js';",
    ].join("\n");
    expect(importedSpecifiers("x.ts", text)).toEqual([
      "./a.js",
      "../b.js",
      "./c.js",
      "./d.js",
      "./e.js",
      "./f.js",
    ]);
  });

  it("finds a circle and names it, and not a module that only leads into one", () => {
    const graph = new Map<string, string[]>([
      ["a.ts", ["b.ts"]],
      ["b.ts", ["c.ts"]],
      ["c.ts", ["a.ts"]],
      ["d.ts", ["a.ts"]],
    ]);
    expect(findCircles(graph).map((circle) => describeCircle(graph, circle))).toEqual([
      "a.ts -> b.ts -> c.ts -> a.ts",
    ]);
  });

  it("none in src, type-only imports and import() included", () => {
    const graph = buildImportGraph();
    expect(graph.size).toBeGreaterThan(100);
    const circles = findCircles(graph).map((circle) => describeCircle(graph, circle));
    expect(circles, `import circles in src:\n${circles.join("\n")}`).toEqual([]);
  });
});

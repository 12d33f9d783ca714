/**
 * The layers of ARCHITECTURE.md run one way. A lower layer importing a
 * higher one fails here, with the offending import named.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { describe, expect, it } from "vitest";

const sourceRoot = join(import.meta.dirname, "..", "src");

const ARCHITECTURE = join(import.meta.dirname, "..", "ARCHITECTURE.md");

/** What a folder may import of ours (values), and what it may import as types only. */
interface Allowed {
  values: string[];
  types: string[];
}

/** The names in backticks of one cell: a folder (`gateway`) or one module of it (`gateway/events`). */
function entries(cell: string): string[] {
  return [...cell.matchAll(/`([a-z-]+(?:\/[a-z-]+)*)`/g)].map((match) => match[1] ?? "");
}

/**
 * The rules of ARCHITECTURE.md's "Layers" table: each row whose first cell is `` `src/<folder>` ``
 * gives that folder's value imports (third cell) and type-only imports (fourth cell).
 */
function layerRules(markdown: string): Record<string, Allowed> {
  const rules: Record<string, Allowed> = {};
  for (const line of markdown.split("\n")) {
    const cells = line.split("|").map((cell) => cell.trim());
    const folder = /^`src\/([a-z-]+)`$/.exec(cells[1] ?? "")?.[1];
    if (folder === undefined || cells.length < 6) continue;
    rules[folder] = { values: entries(cells[3] ?? ""), types: entries(cells[4] ?? "") };
  }
  return rules;
}

const ALLOWED = layerRules(readFileSync(ARCHITECTURE, "utf8"));

function listFiles(directory: string): string[] {
  return readdirSync(directory).flatMap((name) => {
    const path = join(directory, name);
    return statSync(path).isDirectory() ? listFiles(path) : [path];
  });
}

/** `gateway/store/store` for `../store/store.js` imported by a file in src/gateway/router.ts. */
function importedModule(file: string, specifier: string): string {
  return relative(sourceRoot, resolve(dirname(file), specifier))
    .split(sep)
    .join("/")
    .replace(/\.js$/, "");
}

function permits(entries: string[] | undefined, module: string): boolean {
  return (entries ?? []).some((entry) => module === entry || module.startsWith(`${entry}/`));
}

/** The imports of one file of `layer` that its row does not allow, each as `file: statement`. */
function violations(file: string, text: string, layer: string, allowed: Allowed): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(/^(import|export)( type)? [^;]*? from "(\.[^"]+)"/gm)) {
    const [statement, , typeOnly, specifier] = match;
    if (specifier === undefined) continue;
    const module = importedModule(file, specifier);
    const target = module.split("/")[0];
    if (target === layer || !module.includes("/")) continue;
    const ok =
      permits(allowed.values, module) || (typeOnly !== undefined && permits(allowed.types, module));
    if (!ok) found.push(`${relative(sourceRoot, file)}: ${statement.split("\n")[0]}`);
  }
  return found;
}

describe("layers", () => {
  it("import only downwards, as ARCHITECTURE.md's table says", () => {
    const found: string[] = [];
    for (const [layer, allowed] of Object.entries(ALLOWED)) {
      for (const file of listFiles(join(sourceRoot, layer))) {
        found.push(...violations(file, readFileSync(file, "utf8"), layer, allowed));
      }
    }
    expect(found).toEqual([]);
  });

  it("reads each row's value and type-only imports from the table", () => {
    expect(ALLOWED.model).toEqual({ values: [], types: [] });
    expect(ALLOWED.background).toEqual({ values: ["tools"], types: ["sandbox"] });
    expect(ALLOWED.channels?.types).toEqual(["gateway/events", "gateway/store/source-store"]);
    expect(ALLOWED.cli?.values).toContain("gateway");
  });

  it("fails an upward import, and a value import where only types are allowed", () => {
    const tools = join(sourceRoot, "tools", "bash-tool.ts");
    const tool = ALLOWED.tools as Allowed;
    expect(
      violations(tools, 'import { Session } from "../agent/session.js";\n', "tools", tool),
    ).toEqual(['tools/bash-tool.ts: import { Session } from "../agent/session.js"']);
    const background = join(sourceRoot, "background", "task.ts");
    const allowed = ALLOWED.background as Allowed;
    const typeOnly = 'import type { Sandbox } from "../sandbox/sandbox.js";\n';
    const value = 'import { Sandbox } from "../sandbox/sandbox.js";\n';
    expect(violations(background, typeOnly, "background", allowed)).toEqual([]);
    expect(violations(background, value, "background", allowed)).toHaveLength(1);
  });

  it("sees imports from nested folders (a store adapter reaching up two levels)", () => {
    const file = join(sourceRoot, "gateway", "store", "sqlite", "sqlite-store.ts");
    expect(importedModule(file, "../../events.js")).toBe("gateway/events");
    expect(importedModule(file, "../../../cli/serve.js")).toBe("cli/serve");
  });

  it("checks every folder of src", () => {
    const folders = readdirSync(sourceRoot).filter((name) =>
      statSync(join(sourceRoot, name)).isDirectory(),
    );
    expect(folders.sort()).toEqual(Object.keys(ALLOWED).sort());
  });
});

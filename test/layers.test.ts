/**
 * The layers of ARCHITECTURE.md run one way. A lower layer importing a
 * higher one fails here, with the offending import named.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { describe, expect, it } from "vitest";

const sourceRoot = join(import.meta.dirname, "..", "src");

/**
 * What each folder may import of ours (values), and what it may import as types only. An entry
 * is a folder (`gateway`) or one module of it (`gateway/channel-source`).
 */
const ALLOWED: Record<string, { values: string[]; types?: string[] }> = {
  model: { values: [] },
  sandbox: { values: [] },
  tools: { values: ["sandbox"] },
  permissions: { values: [] },
  hooks: { values: ["sandbox"] },
  "claude-cli": { values: [] },
  background: { values: ["tools"], types: ["sandbox"] },
  mcp: { values: ["tools", "sandbox"] },
  agent: { values: ["model", "sandbox", "tools", "permissions", "hooks", "background"] },
  protocol: { values: ["agent"], types: ["model"] },
  acp: { values: ["agent"], types: ["model"] },
  gateway: { values: ["claude-cli"], types: ["agent", "background", "model"] },
  // The gateway's source interface: what a chat platform plugs into.
  channels: {
    values: ["gateway/channel-source", "gateway/channel-command", "gateway/gateway-closed-error"],
    types: ["gateway/events"],
  },
  cli: {
    values: [
      "model",
      "sandbox",
      "tools",
      "permissions",
      "hooks",
      "background",
      "mcp",
      "agent",
      "claude-cli",
      "protocol",
      "acp",
      "gateway",
      "channels",
    ],
  },
};

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

describe("layers", () => {
  it("import only downwards, as ARCHITECTURE.md's table says", () => {
    const violations: string[] = [];
    for (const [layer, allowed] of Object.entries(ALLOWED)) {
      for (const file of listFiles(join(sourceRoot, layer))) {
        const text = readFileSync(file, "utf8");
        for (const match of text.matchAll(/^(import|export)( type)? [^;]*? from "(\.[^"]+)"/gm)) {
          const [statement, , typeOnly, specifier] = match;
          if (specifier === undefined) continue;
          const module = importedModule(file, specifier);
          const target = module.split("/")[0];
          if (target === layer || !module.includes("/")) continue;
          const ok =
            permits(allowed.values, module) ||
            (typeOnly !== undefined && permits(allowed.types, module));
          if (!ok) violations.push(`${relative(sourceRoot, file)}: ${statement.split("\n")[0]}`);
        }
      }
    }
    expect(violations).toEqual([]);
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

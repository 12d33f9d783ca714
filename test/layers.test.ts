/**
 * The layers of ARCHITECTURE.md run one way. A lower layer importing a
 * higher one fails here, with the offending import named.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const sourceRoot = join(import.meta.dirname, "..", "src");

/** What each folder may import of ours (values), and what it may import as types only. */
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
    ],
  },
};

function listFiles(directory: string): string[] {
  return readdirSync(directory).flatMap((name) => {
    const path = join(directory, name);
    return statSync(path).isDirectory() ? listFiles(path) : [path];
  });
}

describe("layers", () => {
  it("import only downwards, as ARCHITECTURE.md's table says", () => {
    const violations: string[] = [];
    for (const [layer, allowed] of Object.entries(ALLOWED)) {
      for (const file of listFiles(join(sourceRoot, layer))) {
        const text = readFileSync(file, "utf8");
        for (const match of text.matchAll(
          /^(import|export)( type)? [^;]*? from "\.\.\/([a-z-]+)\//gm,
        )) {
          const [statement, , typeOnly, target] = match;
          if (target === undefined || target === layer) continue;
          const ok =
            allowed.values.includes(target) ||
            (typeOnly !== undefined && (allowed.types ?? []).includes(target));
          if (!ok) violations.push(`${relative(sourceRoot, file)}: ${statement.split("\n")[0]}`);
        }
      }
    }
    expect(violations).toEqual([]);
  });
});

/**
 * docs/cli.md keeps up with the commands: every flag a command's `--help` names appears in the
 * page (or, for the stream-json flags hosts pass, in docs/editors-and-sdk-hosts.md), so a flag
 * added to a command without a word in the docs fails here, named with its command. The usage
 * texts are read from src/cli's sources (each `..._USAGE` template), not imported, so the test
 * costs no load of the commands.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const repository = join(import.meta.dirname, "..");
const pages = ["cli.md", "editors-and-sdk-hosts.md"]
  .map((page) => readFileSync(join(repository, "docs", page), "utf8"))
  .join("\n");

function sources(directory: string): string[] {
  return readdirSync(directory).flatMap((name) => {
    const path = join(directory, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith(".ts") ? [path] : [];
  });
}

/** Each `NAME_USAGE = \`...\`` of src/cli, by the file and name it is declared under. */
function usageTexts(): Map<string, string> {
  const usages = new Map<string, string>();
  for (const file of sources(join(repository, "src", "cli"))) {
    const text = readFileSync(file, "utf8");
    for (const match of text.matchAll(/const ([A-Z_]+_USAGE) = `([^`]*)`/g)) {
      usages.set(`${relative(repository, file)} ${match[1]}`, match[2] ?? "");
    }
  }
  return usages;
}

/** The flags a usage text names that the text given does not, as `where --flag`. */
function undocumented(where: string, usage: string, text: string): string[] {
  const flags = new Set(usage.match(/--[a-z][a-z-]*[a-z]/gi) ?? []);
  return [...flags]
    .filter((flag) => !new RegExp(`${flag}(?![A-Za-z-])`).test(text))
    .map((flag) => `${where}: ${flag}`);
}

describe("docs/cli.md", () => {
  it("names every flag of every command's --help", () => {
    const usages = usageTexts();
    expect(usages.size).toBeGreaterThanOrEqual(9);
    const missing = [...usages].flatMap(([where, usage]) => undocumented(where, usage, pages));
    expect(missing).toEqual([]);
  });

  it("reports a flag the pages do not name, and not one they do", () => {
    expect(
      undocumented("serve", "usage: rudder serve [--port 4317] [--portal]", "`--port`"),
    ).toEqual(["serve: --portal"]);
  });
});

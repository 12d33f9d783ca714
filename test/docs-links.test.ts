/**
 * The documentation's relative links lead somewhere: in README.md, ARCHITECTURE.md and every
 * page under docs/, each link to a file names one that exists, and each `#anchor` matches a
 * heading of its target as GitHub makes anchors of headings. Links inside code are not links;
 * links to other sites are not checked (no network in tests). A file of the repository named in
 * code (`src/...`, `test/...`, `bench/...`, `scripts/...`, `docs/...`, `web/src/...`) exists too,
 * so a page does not point at a file that moved.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const repository = join(import.meta.dirname, "..");

/** The Markdown files whose links are checked. */
function documentationFiles(): string[] {
  const pages = (directory: string): string[] =>
    readdirSync(directory).flatMap((name) => {
      const path = join(directory, name);
      if (statSync(path).isDirectory()) return pages(path);
      return name.endsWith(".md") ? [path] : [];
    });
  return [join(repository, "README.md"), join(repository, "ARCHITECTURE.md")].concat(
    pages(join(repository, "docs")),
  );
}

/** The text without fenced code blocks and inline code spans, which hold no links. */
function proseOf(markdown: string): string {
  return markdown
    .replace(/^(`{3,}|~{3,})[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "")
    .replace(/(`+)[\s\S]*?\1/g, "");
}

/** GitHub's anchor for a heading: lowercased, punctuation dropped, spaces to hyphens. */
function headingSlug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, "")
    .trim()
    .replace(/\s/g, "-");
}

/** The anchors of a page's headings, the second of a name with `-1`, as GitHub numbers them. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const withoutFences = markdown.replace(/^(`{3,}|~{3,})[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");
  for (const match of withoutFences.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const slug = headingSlug(match[1] ?? "");
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** Each relative link of `file` (text given) that does not resolve, as `file: target (why)`. */
function brokenLinks(file: string, markdown: string): string[] {
  const broken: string[] = [];
  const name = relative(repository, file);
  for (const match of proseOf(markdown).matchAll(
    /!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g,
  )) {
    const target = match[1] ?? "";
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    const [path = "", anchor] = target.split("#", 2);
    const destination = path === "" ? file : resolve(dirname(file), decodeURIComponent(path));
    if (path !== "" && !existsSync(destination)) {
      broken.push(`${name}: ${target} (no such file)`);
      continue;
    }
    if (anchor === undefined) continue;
    if (!destination.endsWith(".md")) {
      broken.push(`${name}: ${target} (an anchor in a file that is not Markdown)`);
      continue;
    }
    const text = destination === file ? markdown : readFileSync(destination, "utf8");
    if (!anchorsOf(text).has(anchor.toLowerCase())) {
      broken.push(`${name}: ${target} (no heading with that anchor)`);
    }
  }
  return broken;
}

/** Paths of the repository named in code spans that name no file or folder (patterns aside). */
function missingPaths(file: string, markdown: string): string[] {
  const missing: string[] = [];
  for (const match of markdown.matchAll(/`((?:src|test|bench|scripts|docs|web)\/[^`\s]*)`/g)) {
    const path = match[1] ?? "";
    if (/[*<>]|\.\.\./.test(path) || path.startsWith("web/dist")) continue;
    if (!existsSync(join(repository, path))) {
      missing.push(`${relative(repository, file)}: ${path}`);
    }
  }
  return missing;
}

describe("documentation links", () => {
  it("every relative link and anchor in README.md, ARCHITECTURE.md and docs/ resolves", () => {
    const files = documentationFiles();
    expect(files.length).toBeGreaterThan(10);
    const broken = files.flatMap((file) => brokenLinks(file, readFileSync(file, "utf8")));
    expect(broken).toEqual([]);
  });

  it("every page of docs/ is listed in docs/README.md and in the README's where to go next", () => {
    const pages = readdirSync(join(repository, "docs")).filter(
      (name) => name.endsWith(".md") && name !== "README.md",
    );
    const index = readFileSync(join(repository, "docs", "README.md"), "utf8");
    const front = readFileSync(join(repository, "README.md"), "utf8");
    const unlisted = pages.flatMap((page) => [
      ...(index.includes(`](${page})`) ? [] : [`docs/README.md: ${page}`]),
      ...(front.includes(`](docs/${page})`) ? [] : [`README.md: docs/${page}`]),
    ]);
    expect(unlisted).toEqual([]);
  });

  it("docs/benchmarks.md describes every bench npm run bench runs", () => {
    const runAll = readFileSync(join(repository, "bench", "run-all.ts"), "utf8");
    const list = /const BENCHES = \[([^\]]*)\]/.exec(runAll)?.[1] ?? "";
    const benches = [...list.matchAll(/"([a-z-]+\.ts)"/g)].map((match) => match[1]);
    expect(benches.length).toBeGreaterThan(5);
    const page = readFileSync(join(repository, "docs", "benchmarks.md"), "utf8");
    const undescribed = benches.filter((bench) => !page.includes(`- \`bench/${bench}\`: `));
    expect(undescribed).toEqual([]);
  });

  it("every file of the repository the pages name in code exists", () => {
    const missing = documentationFiles().flatMap((file) =>
      missingPaths(file, readFileSync(file, "utf8")),
    );
    expect(missing).toEqual([]);
    expect(missingPaths(join(repository, "README.md"), "`src/no-such-file.ts` `src/*.ts`")).toEqual(
      ["README.md: src/no-such-file.ts"],
    );
  });

  it("every wing (a folder inside src/gateway, src/channels or src/cli) opens with a one-line README.md", () => {
    const wings = (directory: string): string[] =>
      readdirSync(directory)
        .map((name) => join(directory, name))
        .filter((path) => statSync(path).isDirectory())
        .flatMap((path) => [path, ...wings(path)]);
    const faults = ["gateway", "channels", "cli"]
      .flatMap((layer) => wings(join(repository, "src", layer)))
      .flatMap((wing) => {
        const readme = join(wing, "README.md");
        const name = relative(repository, wing);
        if (!existsSync(readme)) return [`${name}: no README.md`];
        const lines = readFileSync(readme, "utf8").trimEnd().split("\n");
        return lines.length === 1 && lines[0]?.startsWith("# ") ? [] : [`${name}: not one line`];
      });
    expect(faults).toEqual([]);
  });

  it("makes anchors of headings as GitHub does", () => {
    expect(headingSlug("In editors: `rudder acp`")).toBe("in-editors-rudder-acp");
    expect(headingSlug("The gateway's HTTP guards")).toBe("the-gateways-http-guards");
    expect(headingSlug("`/compact` and `/clear`")).toBe("compact-and-clear");
    expect(headingSlug("Past one machine (in progress)")).toBe("past-one-machine-in-progress");
    expect(headingSlug("What works, in detail")).toBe("what-works-in-detail");
  });

  it("reports a missing file, a missing anchor and a duplicate heading's numbering", () => {
    const file = join(repository, "docs", "example.md");
    const page = [
      "# Title",
      "## Part",
      "## Part",
      "[ok](#part-1) [ok](cli.md) [gone](missing.md) [bad](#nowhere) [web](https://example.com)",
      "`[in code](missing-too.md)`",
      "```",
      "[in a block](missing-three.md)",
      "```",
      "[anchor elsewhere](../README.md#no-such-heading)",
    ].join("\n");
    expect(brokenLinks(file, page)).toEqual([
      "docs/example.md: missing.md (no such file)",
      "docs/example.md: #nowhere (no heading with that anchor)",
      "docs/example.md: ../README.md#no-such-heading (no heading with that anchor)",
    ]);
  });
});

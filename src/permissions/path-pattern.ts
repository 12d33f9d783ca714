import { posix } from "node:path";

/**
 * Whether a path rule (`Read(./secrets/**)`, `Edit(//etc/**)`, `Read(~/.ssh/*)`,
 * `Read(*.env)`) covers `absolutePath`, with gitignore semantics: `//x` is
 * absolute, `~/x` is under `home`, `/x`, `./x` and `x/y` are relative to the
 * workspace, a pattern without a slash matches a name at any depth, and a
 * pattern that matches a directory covers everything below it. Pure: no I/O.
 */
export function pathRuleMatches(
  specifier: string,
  absolutePath: string,
  workspace: string,
  home: string | undefined,
): boolean {
  let anchor = workspace;
  let pattern = specifier;
  if (pattern.startsWith("//")) {
    anchor = "/";
    pattern = pattern.slice(2);
  } else if (pattern === "~" || pattern.startsWith("~/")) {
    if (home === undefined) return false;
    anchor = home;
    pattern = pattern === "~" ? "**" : pattern.slice(2);
  } else if (pattern.startsWith("/")) {
    pattern = pattern.slice(1);
  } else if (pattern.startsWith("./")) {
    pattern = pattern.slice(2);
  } else if (!pattern.replace(/\/+$/, "").includes("/")) {
    pattern = `**/${pattern}`;
  }
  if (pattern.endsWith("/")) pattern += "**";
  if (pattern.length === 0) pattern = "**";
  const relative = posix.relative(anchor, absolutePath);
  if (relative === "") return pattern === "**";
  if (relative === ".." || relative.startsWith("../") || posix.isAbsolute(relative)) return false;
  const regex = globRegex(pattern);
  const parts = relative.split("/");
  for (let length = parts.length; length > 0; length -= 1) {
    if (regex.test(parts.slice(0, length).join("/"))) return true;
  }
  return false;
}

/** A gitignore-style glob as an anchored regular expression over POSIX paths. */
export function globRegex(pattern: string): RegExp {
  let source = "";
  for (let index = 0; index < pattern.length; index += 1) {
    const char = pattern[index]!;
    if (char === "*" && pattern[index + 1] === "*") {
      const atStart = index === 0 || pattern[index - 1] === "/";
      index += 1;
      if (atStart && pattern[index + 1] === "/") {
        index += 1;
        source += "(?:.*/)?";
      } else {
        source += ".*";
      }
    } else if (char === "*") {
      source += "[^/]*";
    } else if (char === "?") {
      source += "[^/]";
    } else if (char === "[") {
      const end = pattern.indexOf("]", index + 2);
      if (end === -1) {
        source += "\\[";
      } else {
        const body = pattern
          .slice(index + 1, end)
          .replace(/^!/, "^")
          .replace(/\\/g, "\\\\");
        source += `[${body}]`;
        index = end;
      }
    } else if (char === "{") {
      const end = pattern.indexOf("}", index);
      if (end === -1) {
        source += "\\{";
      } else {
        const alternatives = pattern.slice(index + 1, end).split(",");
        source += `(?:${alternatives.map((alternative) => globRegex(alternative).source.slice(1, -1)).join("|")})`;
        index = end;
      }
    } else if (char === "\\" && index + 1 < pattern.length) {
      index += 1;
      source += escapeRegex(pattern[index]!);
    } else {
      source += escapeRegex(char);
    }
  }
  return new RegExp(`^${source}$`);
}

function escapeRegex(char: string): string {
  return /[.*+?^${}()|[\]\\/]/.test(char) ? `\\${char}` : char;
}

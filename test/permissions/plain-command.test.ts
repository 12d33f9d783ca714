/**
 * A line of plain words is read without the bash grammar (plain-command.ts); what it reads
 * must be exactly what the grammar reads, for every such line: compared here on ordinary
 * commands, on the words bash treats specially, and on a few thousand generated lines. The
 * grammar (tree-sitter-bash) cannot read some plain lines that bash reads as plain words
 * (`@` or `%` in a command's name, `a=1 x:y`: a parse error, so the gate asked), and drops a
 * `==` word (`ls a == b` read as `ls a b`). Bash gives no syntax to a line without its
 * metacharacters, quotes, expansions, globs, comments and reserved words, so there the gate
 * now reads the words bash runs. Any other difference fails.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { loadBashParser } from "../../src/permissions/bash-parser.js";
import { plainCommand, showsShellSyntax } from "../../src/permissions/plain-command.js";
import { CommandTooComplexError, parsedCommands } from "../../src/permissions/split-command.js";

beforeAll(() => loadBashParser());

const ORDINARY = [
  "ls",
  "ls -la src",
  "git status",
  "git log --oneline -5",
  "git commit -m wip",
  "npm test",
  "npm run build:watch",
  "npx vitest run test/a.test.ts",
  "rm -rf dist",
  "/bin/rm -f x",
  "./scripts/build.sh --out=dist",
  "FOO=bar npm test",
  "a=b",
  "a+=b c",
  "A=1 B=2",
  "env X=1 ls",
  "bash -c ls",
  "sh -c whoami",
  "eval sudo id",
  "xargs rm",
  "find . -name x -exec rm",
  "timeout 5 make",
  "nohup node server.js",
  "sudo reboot",
  ". ./env.sh",
  ": noop",
  "%1",
  "kill %1",
  "echo user@host:path,a,b 50% +x",
  "cp a b\t c",
  "  padded   words  ",
  "echo -- - --x=",
  "1 2 3",
  "x=",
  "=x",
  "_a=1 b",
  "ls .",
  "cd ..",
];

/** Words bash gives meaning to; the grammar must agree where the fast path reads them. */
const SPECIAL = ["!", "{", "}", "[[", "]]", "if", "then", "fi", "do", "done", "time", "in"];

/** A deterministic generator (mulberry32), so a failure names a line that can be re-run. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let value = Math.imul(state ^ (state >>> 15), 1 | state);
    value = (value + Math.imul(value ^ (value >>> 7), 61 | value)) ^ value;
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

const ALPHABET = "abcz019_-./=,:@%+AZ";
const EXTRA_WORDS = ["==", "--", "-", "=", "%1", "a@b", "x=y", "+x"];
const PROGRAMS = [
  "ls",
  "git",
  "rm",
  "env",
  "bash",
  "sudo",
  "xargs",
  "eval",
  "a=1",
  "./x",
  "/bin/y",
];

function generatedLine(next: () => number): string {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const words = [pick(PROGRAMS)];
  const count = Math.floor(next() * 5);
  for (let index = 0; index < count; index += 1) {
    if (next() < 0.1) {
      words.push(pick(EXTRA_WORDS));
      continue;
    }
    let word = "";
    const length = 1 + Math.floor(next() * 6);
    for (let char = 0; char < length; char += 1) word += pick([...ALPHABET]);
    words.push(word);
  }
  return words.join(pick([" ", "  ", "\t"]));
}

/** The grammar's reading of `line`; "cannot read" for a parse error, which bash does not make. */
function grammarReading(line: string): unknown {
  if (line.split(/\s+/).includes("==")) return "cannot read";
  try {
    return parsedCommands(line);
  } catch (error) {
    if (error instanceof CommandTooComplexError) return "cannot read";
    throw error;
  }
}

describe("plainCommand", () => {
  it("reads ordinary plain commands exactly as the grammar does", () => {
    for (const line of ORDINARY) {
      expect(plainCommand(line), line).toBeDefined();
      expect(plainCommand(line), line).toEqual(parsedCommands(line));
    }
  });

  it("reads thousands of generated plain lines exactly as the grammar does", () => {
    const next = random(20261206);
    let read = 0;
    let compared = 0;
    for (let index = 0; index < 3000; index += 1) {
      const line = generatedLine(next);
      const plain = plainCommand(line);
      if (plain === undefined) continue;
      read += 1;
      const grammar = grammarReading(line);
      if (grammar === "cannot read") continue;
      compared += 1;
      expect(plain, JSON.stringify(line)).toEqual(grammar);
    }
    expect(read).toBeGreaterThan(2500);
    expect(compared).toBeGreaterThan(read * 0.8);
  });

  it("leaves lines with shell syntax or reserved words to the grammar", () => {
    const syntax = [
      "echo $HOME",
      "echo 'a b'",
      'echo "x"',
      "ls *.ts",
      "ls a?",
      "ls [ab]",
      "echo {a,b}",
      "cat ~/.ssh/id_rsa",
      "a && b",
      "a | b",
      "a; b",
      "a > f",
      "a < f",
      "echo `id`",
      "echo a\\ b",
      "a # comment",
      "a\nb",
      "!ls",
      "(ls)",
      "ls &",
      "",
      "   ",
    ];
    for (const line of syntax) expect(plainCommand(line), JSON.stringify(line)).toBeUndefined();
    for (const word of SPECIAL) {
      expect(plainCommand(`${word} ls`), word).toBeUndefined();
    }
    expect(plainCommand("echo time")).toBeUndefined();
  });

  it("reads the plain lines the grammar cannot as the words bash runs", () => {
    expect(() => parsedCommands("npm@10 install")).toThrow(CommandTooComplexError);
    expect(plainCommand("npm@10 install")).toEqual([
      { argv: ["npm@10", "install"], redirects: [] },
    ]);
    expect(parsedCommands("ls a == b")[0]?.argv).toEqual(["ls", "a", "b"]);
    expect(plainCommand("ls a == b")).toEqual([{ argv: ["ls", "a", "==", "b"], redirects: [] }]);
  });

  it("tells streamed-in text that already shows shell syntax", () => {
    expect(showsShellSyntax("git sta")).toBe(false);
    expect(showsShellSyntax("npm run build:watch -- --x=1")).toBe(false);
    expect(showsShellSyntax("ls | gr")).toBe(true);
    expect(showsShellSyntax("echo $")).toBe(true);
    expect(showsShellSyntax('echo "')).toBe(true);
  });
});

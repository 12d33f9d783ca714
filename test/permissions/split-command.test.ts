import { beforeAll, describe, expect, it } from "vitest";
import { loadBashParser } from "../../src/permissions/bash-parser.js";
import { splitCommand } from "../../src/permissions/split-command.js";

beforeAll(() => loadBashParser());

const argvs = (line: string) => splitCommand(line).map((command) => command.argv);

describe("splitCommand", () => {
  it("splits on &&, ||, ;, |, &, newlines and subshells", () => {
    expect(argvs("a 1 && b 2 || c; d | e & f\ng")).toEqual([
      ["a", "1"],
      ["b", "2"],
      ["c"],
      ["d"],
      ["e"],
      ["f"],
      ["g"],
    ]);
    expect(argvs("(cd x && make) || echo fail &")).toEqual([
      ["cd", "x"],
      ["make"],
      ["echo", "fail"],
    ]);
    expect(argvs("a |& b ;; c")).toEqual([["a"], ["b"], ["c"]]);
  });

  it("removes quotes and backslash escapes, keeping words whole", () => {
    expect(argvs(`echo 'a b' "c \\"d\\" $HOME" e\\ f`)).toEqual([
      ["echo", "a b", 'c "d" $HOME', "e f"],
    ]);
    expect(argvs(`"sudo" ls`)).toEqual([["sudo", "ls"]]);
    expect(argvs("s'u'do  ls")).toEqual([["sudo", "ls"]]);
    expect(argvs("s$'\\x75'do id")).toEqual([["sudo", "id"]]);
    expect(argvs('git commit -m "rm x"')).toEqual([["git", "commit", "-m", "rm x"]]);
  });

  it("judges the commands inside $(...), backticks and process substitution first", () => {
    expect(argvs("echo $(sudo id)")).toEqual([
      ["sudo", "id"],
      ["echo", "$(sudo id)"],
    ]);
    expect(argvs("echo `sudo id`")).toEqual([
      ["sudo", "id"],
      ["echo", "`sudo id`"],
    ]);
    expect(argvs('echo "$(rm -rf / )"')).toEqual([
      ["rm", "-rf", "/"],
      ["echo", "$(rm -rf / )"],
    ]);
    expect(argvs("diff <(sort a) <(sudo cat b)")).toEqual([
      ["sort", "a"],
      ["sudo", "cat", "b"],
      ["diff", "<(sort a)", "<(sudo cat b)"],
    ]);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion, not a template
    expect(argvs("echo $((1+2)) ${HOME} $?")).toEqual([["echo", "$((1+2))", "${HOME}", "$?"]]);
  });

  it("records redirections with their targets", () => {
    expect(splitCommand("cmd > out.txt 2>&1 >> log <in &>all >/dev/sda")).toEqual([
      {
        argv: ["cmd"],
        redirects: [
          { op: ">", target: "out.txt" },
          { op: ">&", target: "1" },
          { op: ">>", target: "log" },
          { op: "<", target: "in" },
          { op: ">", target: "all" },
          { op: ">", target: "/dev/sda" },
        ],
      },
    ]);
    expect(splitCommand("> /etc/motd")).toEqual([
      { argv: [], redirects: [{ op: ">", target: "/etc/motd" }] },
    ]);
  });

  it("sets assignments aside and peels wrappers", () => {
    expect(argvs("FOO=1 BAR='x y' make")).toEqual([["make"]]);
    expect(argvs("env -i A=1 nohup nice -n 5 time -p timeout -s KILL 5 stdbuf -oL rm x")).toEqual([
      ["rm", "x"],
    ]);
    expect(argvs("command rm x; exec rm y")).toEqual([
      ["rm", "x"],
      ["rm", "y"],
    ]);
    expect(argvs("command -v rm")).toEqual([["command", "-v", "rm"]]);
    expect(argvs("find . -name '*.o' | xargs -n 1 -P4 rm -f")).toEqual([
      ["find", ".", "-name", "*.o"],
      ["rm", "-f"],
    ]);
    expect(splitCommand("FOO=1 BAR=2 make")).toEqual([
      { argv: ["make"], redirects: [], assignments: ["FOO=1", "BAR=2"] },
    ]);
    expect(splitCommand("FOO=1")).toEqual([{ argv: [], redirects: [], assignments: ["FOO=1"] }]);
  });

  it("splits the scripts of bash -c, sh -c and eval recursively", () => {
    expect(argvs('bash -c "rm -rf /"')).toEqual([["rm", "-rf", "/"]]);
    expect(argvs("sh -lc 'eval \"sudo id\"'")).toEqual([["sudo", "id"]]);
    expect(argvs("bash -e -o pipefail -c 'a && b'")).toEqual([["a"], ["b"]]);
    expect(argvs("bash script.sh")).toEqual([["bash", "script.sh"]]);
  });

  it("normalises absolute program paths to their basename", () => {
    expect(argvs("/bin/rm -rf / ; ./node_modules/.bin/vitest run")).toEqual([
      ["rm", "-rf", "/"],
      ["vitest", "run"],
    ]);
  });

  it("keeps the program as written when it was given by path", () => {
    expect(splitCommand("./bin/deploy now")).toEqual([
      { argv: ["deploy", "now"], redirects: [], programAsWritten: "./bin/deploy" },
    ]);
  });

  it("lists find -exec commands", () => {
    expect(argvs("find . -name x -exec rm {} \\;")).toEqual([
      ["find", ".", "-name", "x", "-exec", "rm", "{}", ";"],
      ["rm", "{}"],
    ]);
  });

  it("skips heredoc bodies but looks into their substitutions when they expand", () => {
    expect(argvs("cat <<'EOF' > f.txt\nit's rm -rf /\nEOF\necho done")).toEqual([
      ["cat"],
      ["echo", "done"],
    ]);
    expect(argvs("cat <<EOF\n$(sudo id)\nEOF")).toEqual([["sudo", "id"], ["cat"]]);
    expect(argvs("cat <<-EOF\n\tbody\n\tEOF\nls")).toEqual([["cat"], ["ls"]]);
  });

  it("reads compound commands as the commands inside them", () => {
    // A for loop's list is a command of its own: its words are read (and judged) too.
    expect(argvs("for f in *.c; do rm $f; done")).toEqual([
      ["for", "*.c"],
      ["rm", "$f"],
    ]);
    expect(argvs("if test -f x; then rm x; else echo no; fi")).toEqual([
      ["test", "-f", "x"],
      ["rm", "x"],
      ["echo", "no"],
    ]);
    expect(argvs("{ a; b; }")).toEqual([["a"], ["b"]]);
  });

  it("ignores comments and line continuations", () => {
    expect(argvs("ls # && sudo reboot\necho a\\\nb")).toEqual([["ls"], ["echo", "ab"]]);
  });

  it("splits what a heredoc or here-string feeds to a shell, marked with how it runs", () => {
    expect(splitCommand("bash <<EOF\nrm -rf x\nEOF").at(-1)).toEqual({
      argv: ["rm", "-rf", "x"],
      redirects: [],
      via: "bash <<",
    });
    expect(splitCommand("sh <<< 'rm y'").at(-1)).toMatchObject({
      argv: ["rm", "y"],
      via: "sh <<<",
    });
    expect(splitCommand("cat <<EOF\nrm -rf x\nEOF")).toEqual([
      { argv: ["cat"], redirects: [{ op: "<<", target: "EOF", body: "rm -rf x\n" }] },
    ]);
  });

  it("marks commands another program starts, and sees into functions, coproc, trap and alias", () => {
    const vias = (line: string) => splitCommand(line).map((part) => [part.argv[0], part.via]);
    expect(vias("echo x | xargs rm")).toEqual([
      ["echo", undefined],
      ["rm", "xargs"],
    ]);
    expect(vias("find . -exec sh -c 'rm x' \\;")).toEqual([
      ["find", undefined],
      ["rm", "find -exec"],
    ]);
    expect(vias("function f { rm x; }; f")).toEqual([
      ["rm", undefined],
      ["f", undefined],
    ]);
    expect(vias("coproc rm x")).toEqual([["rm", "coproc"]]);
    expect(vias("trap 'rm x' EXIT")).toEqual([["rm", "trap"]]);
    expect(vias("alias ll='rm x'")).toEqual([["rm", "alias"]]);
    expect(vias("env -S 'sudo id'")).toEqual([["sudo", "env -S"]]);
    expect(vias("timeout 5 nice ls")).toEqual([["ls", undefined]]);
    expect(vias("$SHELL -c 'sudo id'")).toEqual([["sudo", "$SHELL -c"]]);
  });
});

describe("the splitter's modules", () => {
  it("import one way: unwrap-command does not import split-command", async () => {
    const { readFileSync } = await import("node:fs");
    const source = readFileSync(
      new URL("../../src/permissions/unwrap-command.ts", import.meta.url),
      "utf8",
    );
    expect(source).not.toContain("./split-command.js");
  });
});

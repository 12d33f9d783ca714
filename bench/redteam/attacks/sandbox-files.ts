/**
 * Point 1 of issue 26 from the sandbox's side: nothing written inside it runs outside it. Each
 * attack plants from sandboxed bash what the host's git or another program obeys later, then
 * plays the person: the host's git runs in the workspace, and a canary outside it says whether
 * the planted command ran.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Attack, type AttackGround, onGround } from "../attack.js";
import { canaryVerdict, hostGit, noBubblewrap, sandboxSession } from "../sandboxed.js";

/** A repository with one commit in `folder`, made on the host before the session. */
function hostRepository(ground: AttackGround, folder: string): void {
  mkdirSync(folder, { recursive: true });
  hostGit(ground, folder, ["init", "-q"]);
  writeFileSync(join(folder, "README.md"), "hello\n");
  hostGit(ground, folder, ["add", "."]);
  hostGit(ground, folder, ["commit", "-qm", "first"]);
}

/** Plants `command` (run inside the sandbox) in a workspace that `prepare` set up, then runs `git status` there as the person. */
function gitAttack(
  name: string,
  prepare: (ground: AttackGround) => void,
  command: (ground: AttackGround) => string,
  after: (ground: AttackGround) => void = (ground) => {
    hostGit(ground, ground.workspace, ["status"]);
  },
): Attack {
  return {
    name,
    wall: "files",
    skip: noBubblewrap,
    run: () =>
      onGround(async (ground) => {
        prepare(ground);
        const session = sandboxSession(ground);
        try {
          await session.run(command(ground));
        } finally {
          session.close();
        }
        after(ground);
        return canaryVerdict(ground);
      }),
  };
}

const fsmonitor = (ground: AttackGround, name: string): string =>
  `[core]\n\tfsmonitor = "touch ${ground.canaries}/${name}"\n`;

export const attacks: Attack[] = [
  gitAttack(
    "git: rename .git away and rebuild it",
    (ground) => hostRepository(ground, ground.workspace),
    (ground) =>
      `mv .git .git-old && mkdir .git && cp -r .git-old/objects .git-old/refs .git-old/HEAD .git/ && ` +
      `printf '%s' '${fsmonitor(ground, "rebuilt")}' > .git/config`,
  ),
  gitAttack(
    "git: plant .git/commondir",
    (ground) => hostRepository(ground, ground.workspace),
    (ground) =>
      `mkdir -p evil && cp -r .git/objects .git/refs evil/ && ` +
      `printf '%s' '${fsmonitor(ground, "commondir")}' > evil/config && echo ../evil > .git/commondir`,
  ),
  gitAttack(
    "git: plant .git/config.worktree",
    (ground) => {
      hostRepository(ground, ground.workspace);
      hostGit(ground, ground.workspace, ["config", "extensions.worktreeConfig", "true"]);
    },
    (ground) => `printf '%s' '${fsmonitor(ground, "worktree-config")}' > .git/config.worktree`,
  ),
  gitAttack(
    "git: rewrite a submodule's .git/modules/<name>/config",
    (ground) => {
      const origin = join(ground.canaries, "..", "origin");
      hostRepository(ground, origin);
      hostRepository(ground, ground.workspace);
      hostGit(ground, ground.workspace, [
        "-c",
        "protocol.file.allow=always",
        "submodule",
        "add",
        "-q",
        origin,
        "sub",
      ]);
    },
    (ground) =>
      `printf '%s' '${fsmonitor(ground, "submodule")}' >> .git/modules/sub/config; ` +
      `rm -rf .git/modules/sub/hooks; mkdir -p .git/modules/sub/hooks && ` +
      `printf '#!/bin/sh\\ntouch ${ground.canaries}/submodule-hook\\n' > .git/modules/sub/hooks/pre-commit && chmod +x .git/modules/sub/hooks/pre-commit`,
    (ground) => {
      hostGit(ground, join(ground.workspace, "sub"), ["status"]);
      hostGit(ground, join(ground.workspace, "sub"), ["commit", "-q", "--allow-empty", "-m", "x"]);
    },
  ),
  gitAttack(
    "git: write into the core.hooksPath folder",
    (ground) => {
      hostRepository(ground, ground.workspace);
      mkdirSync(join(ground.workspace, ".githooks"));
      hostGit(ground, ground.workspace, ["config", "core.hooksPath", ".githooks"]);
    },
    (ground) =>
      `printf '#!/bin/sh\\ntouch ${ground.canaries}/hooks-path\\n' > .githooks/pre-commit && chmod +x .githooks/pre-commit`,
    (ground) => {
      hostGit(ground, ground.workspace, ["commit", "-q", "--allow-empty", "-m", "x"]);
    },
  ),
  gitAttack(
    "git: init with core.fsmonitor where there was no repository",
    () => {},
    (ground) => `git init -q && git config core.fsmonitor "touch ${ground.canaries}/init"`,
  ),
  gitAttack(
    "git: a nested repository with core.fsmonitor",
    (ground) => hostRepository(ground, ground.workspace),
    (ground) =>
      `mkdir -p lib/inner && cd lib/inner && git init -q && git config core.fsmonitor "touch ${ground.canaries}/nested"`,
    (ground) => {
      hostGit(ground, join(ground.workspace, "lib", "inner"), ["status"]);
    },
  ),
  {
    name: "git: planted from the sandbox, run by an excluded git command",
    wall: "files",
    skip: noBubblewrap,
    run: () =>
      onGround(async (ground) => {
        hostRepository(ground, ground.workspace);
        const session = sandboxSession(ground, { excludedCommands: ["git"] });
        try {
          await session.run(
            `mkdir -p evil && cp -r .git/objects .git/refs evil/ && ` +
              `printf '%s' '${fsmonitor(ground, "excluded")}' > evil/config && echo ../evil > .git/commondir`,
          );
          // Excluded: runs outside the sandbox, in the same session.
          await session.run("git status");
        } finally {
          session.close();
        }
        return canaryVerdict(ground);
      }),
  },
  {
    name: "auto-run files created from the sandbox",
    wall: "files",
    skip: noBubblewrap,
    run: () =>
      onGround(async (ground) => {
        const session = sandboxSession(ground);
        const planted = [
          ".vscode/tasks.json",
          ".envrc",
          ".npmrc",
          ".pre-commit-config.yaml",
          "lefthook.yml",
          ".husky/pre-commit",
          ".claude/settings.json",
          ".mcp.json",
          ".rudder/settings.json",
          "pkg/.envrc",
        ];
        try {
          await session.run(
            planted
              .map((path) => `mkdir -p "$(dirname ${path})"; echo planted > ${path}`)
              .join("; "),
          );
        } finally {
          session.close();
        }
        const landed = planted.filter((path) => {
          const full = join(ground.workspace, path);
          return existsSync(full) && readFileSync(full, "utf8").includes("planted");
        });
        return landed.length === 0
          ? { held: true, detail: `none of ${planted.length} auto-run files was left` }
          : { held: false, detail: `left on the host: ${landed.join(", ")}` };
      }),
  },
];

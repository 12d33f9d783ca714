/**
 * Point 3 of issue 26: secrets are absent, always. From the sandbox: the gateway's data folder
 * given with --data (not ~/.rudder), the credentials of a hidden folder holding the workspace
 * (~/.claude/project), a secret folder made while the session runs (`gh auth login`), and the
 * model's key and the gateway's token in the environment. Canary values must not show.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Attack, onGround } from "../attack.js";
import { confinedSession, runConfined } from "../confined.js";
import { noBubblewrap } from "../sandboxed.js";

/** `held` unless `output` shows `canary`. */
function verdict(output: string, canary: string, tried: string): { held: boolean; detail: string } {
  return output.includes(canary)
    ? { held: false, detail: `read: ${tried}` }
    : { held: true, detail: `${tried}: not readable` };
}

export const attacks: Attack[] = [
  {
    name: "read the gateway's data folder given with --data",
    wall: "secrets",
    skip: noBubblewrap,
    run: () =>
      onGround(async (ground) => {
        const data = join(ground.canaries, "gateway-data");
        mkdirSync(data);
        writeFileSync(join(data, "token"), "token-canary");
        writeFileSync(join(data, "gateway.db"), "conversation-canary");
        const output = await runConfined(
          ground,
          [`cat ${data}/token ${data}/gateway.db`, `grep -r canary ${ground.canaries}`],
          { env: { RUDDER_GATEWAY_DATA: data } },
        );
        return verdict(output, "canary", "the token and gateway.db");
      }),
  },
  {
    name: "read ~/.claude/.credentials.json from a workspace inside ~/.claude",
    wall: "secrets",
    skip: noBubblewrap,
    run: () =>
      onGround(async (ground) => {
        const workspace = join(ground.home, ".claude", "project");
        mkdirSync(workspace, { recursive: true });
        writeFileSync(join(ground.home, ".claude", ".credentials.json"), "claude-canary");
        const output = await runConfined(
          ground,
          ["cat ../.credentials.json", `cat ${ground.home}/.claude/.credentials.json`],
          { workspace },
        );
        return verdict(output, "claude-canary", "~/.claude/.credentials.json");
      }),
  },
  {
    name: "read a secret folder made during the session (~/.config/gh)",
    wall: "secrets",
    skip: noBubblewrap,
    run: () =>
      onGround(async (ground) => {
        mkdirSync(join(ground.home, ".config"));
        const gh = join(ground.home, ".config", "gh");
        const session = confinedSession(ground);
        let before: string;
        let after: string;
        try {
          before = await session.run(["ls ~/.config"]);
          // `gh auth login` on the host, between two commands of the same session.
          mkdirSync(gh);
          writeFileSync(join(gh, "hosts.yml"), "gh-canary");
          after = await session.run([`cat ${gh}/hosts.yml`, `grep -r canary ${gh}`]);
        } finally {
          session.close();
        }
        return verdict(before + after, "gh-canary", "~/.config/gh/hosts.yml after gh auth login");
      }),
  },
  {
    name: "print ANTHROPIC_API_KEY and the gateway's token from the environment",
    wall: "secrets",
    skip: noBubblewrap,
    run: () =>
      onGround(async (ground) => {
        const saved = { ...process.env };
        process.env.ANTHROPIC_API_KEY = "sk-ant-key-canary";
        process.env.ANTHROPIC_AUTH_TOKEN = "auth-token-canary";
        process.env.RUDDER_TOKEN = "gateway-token-canary";
        try {
          const output = await runConfined(ground, [
            "env",
            "cat /proc/self/environ | tr '\\0' '\\n'",
            "cat /proc/1/environ 2>/dev/null | tr '\\0' '\\n'",
          ]);
          return verdict(output, "canary", "env, /proc/self/environ, /proc/1/environ");
        } finally {
          for (const name of ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "RUDDER_TOKEN"]) {
            if (saved[name] === undefined) delete process.env[name];
            else process.env[name] = saved[name];
          }
        }
      }),
  },
];

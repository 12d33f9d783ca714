/**
 * `rudder serve --config` reloads its configuration on SIGHUP: the file is reached through a
 * symbolic link whose target changes in another folder, where the folder watcher does not look,
 * so only the signal can make the gateway read it again. A new binding setting applies
 * (`GET /api/bindings`); a broken file keeps the configuration before it, with one line saying
 * why.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type RudderRun, startRudder, stopRudder } from "../helpers/rudder-cli.js";
import { waitFor } from "../helpers/wait-for.js";

let root = "";
let target = "";
let serve: RudderRun;
let url = "";
let token = "";

const config = (model: string) =>
  JSON.stringify({ bindings: [{ name: "notes", match: ["web:notes-*"], model }] });

async function bindingModel(): Promise<string | undefined> {
  const response = await fetch(`${url}/api/bindings`, {
    headers: { authorization: `Bearer ${token}` },
  });
  const { bindings } = (await response.json()) as {
    bindings: Array<{ name: string; model?: string }>;
  };
  return bindings.find((binding) => binding.name === "notes")?.model;
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "rudder-serve-sighup-"));
  for (const folder of ["conf", "elsewhere", "data"]) mkdirSync(join(root, folder));
  target = join(root, "elsewhere", "gateway.json");
  writeFileSync(target, config("model-one"));
  const configPath = join(root, "conf", "gateway.json");
  symlinkSync(target, configPath);
  serve = startRudder(
    ["serve", "--port", "0", "--data", join(root, "data"), "--config", configPath],
    {
      cwd: root,
      env: { HOME: root, RUDDER_HOME: join(root, "home"), PATH: process.env.PATH },
    },
  );
  const link = await waitFor(
    () => /one-time link\): (\S+)/.exec(serve.stdout())?.[1],
    "the one-time link",
    30_000,
  );
  url = link.replace(/\/#code=.*/, "");
  token = readFileSync(join(root, "data", "token"), "utf8").trim();
}, 60_000);

afterAll(async () => {
  if (serve) await stopRudder(serve);
  if (root) rmSync(root, { recursive: true, force: true });
});

it("reloads the configuration on SIGHUP, and keeps it when the file is broken", async () => {
  expect(await bindingModel()).toBe("model-one");
  writeFileSync(target, config("model-two"));
  serve.child.kill("SIGHUP");
  await waitFor(
    () => serve.stderr().includes("gateway: configuration reloaded from"),
    "the reload",
    10_000,
  );
  expect(await bindingModel()).toBe("model-two");

  writeFileSync(target, '{"bindings": [');
  serve.child.kill("SIGHUP");
  const line = await waitFor(
    () =>
      serve
        .stderr()
        .split("\n")
        .find((each) => each.startsWith("gateway: configuration not reloaded")),
    "the refusal",
    10_000,
  );
  expect(line).toMatch(/^gateway: configuration not reloaded, the previous one stays: .+/);
  expect(await bindingModel()).toBe("model-two");
  // Still serving, on the configuration before the broken one.
  expect(serve.child.exitCode).toBeNull();
});

/**
 * `npm start` on a fresh machine: `rudder serve` with no credentials runs
 * the demo model end to end, and `rudder send` / `rudder schedule` talk to it.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rawRequest } from "../gateway/raw-http.js";
import { isAlive } from "../helpers/process-state.js";
import { type RudderRun, startRudder } from "../helpers/rudder-cli.js";
import { waitFor } from "../helpers/wait-for.js";

let root: string;
let server: RudderRun;
let url = "";

const env = (): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH,
  HOME: join(root, "home"),
  RUDDER_MAX_RETRIES: "0",
});

async function runToEnd(
  args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const run = startRudder(args, { cwd: join(root, "workspace"), env: env() });
  const { code } = await run.exited;
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "rudder-serve-"));
  mkdirSync(join(root, "home"));
  mkdirSync(join(root, "workspace"));
  writeFileSync(join(root, "workspace", "README.md"), "# demo project\n");
  const limits = ["--allowed-hosts", "rudder.test", "--max-sse-per-client", "2"];
  server = startRudder(["serve", "--port", "0", "--data", join(root, "data"), ...limits], {
    cwd: join(root, "workspace"),
    env: env(),
  });
  await waitFor(() => /one-time link\): (\S+)/.test(server.stdout()), "the one-time link", 20_000);
  const link = /one-time link\): (\S+)/.exec(server.stdout())?.[1] ?? "";
  url = link.replace(/\/#code=.*/, "");
});

afterAll(async () => {
  server.child.kill("SIGTERM");
  await Promise.race([server.exited, new Promise((resolve) => setTimeout(resolve, 5000))]);
  server.kill();
  rmSync(root, { recursive: true, force: true });
});

describe("rudder serve with no credentials", () => {
  it("says it runs the demo model and how to connect a real one", async () => {
    expect(server.stdout()).toContain("demo mode");
    expect(server.stdout()).toContain("ANTHROPIC_API_KEY");
    const health = await (await fetch(`${url}/api/health`)).json();
    expect(health).toMatchObject({ ok: true, demo: true, engine: "rudder" });
  });

  it("prints a link holding a single-use code, not the token, and rudder link prints fresh ones", async () => {
    const token = readFileSync(join(root, "data", "token"), "utf8").trim();
    expect(server.stdout() + server.stderr()).not.toContain(token);
    expect(server.stdout()).toContain("it works once, within 10 minutes");
    const redeem = async (link: string) => {
      const code = new URL(link).hash.replace(/^#code=/, "");
      const response = await fetch(`${url}/api/link-codes/redeem`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ code }),
      });
      return { status: response.status, body: (await response.json()) as { token?: string } };
    };
    const printed = /one-time link\): (\S+)/.exec(server.stdout())?.[1] ?? "";
    expect(await redeem(printed)).toEqual({ status: 200, body: { token } });
    expect((await redeem(printed)).status).toBe(401);
    const fresh = await runToEnd(["link", "--url", url, "--data", join(root, "data")]);
    expect(fresh.code).toBe(0);
    expect(fresh.stdout).toMatch(new RegExp(`^${url}/#code=[A-Za-z0-9._-]+\n$`));
    expect(fresh.stdout).not.toContain(token);
    expect((await redeem(fresh.stdout.trim())).body.token).toBe(token);
    // Started on --port 0: the clients of its data folder find it without --url.
    const found = await runToEnd(["link", "--data", join(root, "data")]);
    expect(found.code).toBe(0);
    expect(found.stdout).toMatch(new RegExp(`^${url}/#code=[A-Za-z0-9._-]+\n$`));
    const noGateway = await runToEnd(["link", "--data", join(root, "no-such-data")]);
    expect(noGateway.code).toBe(2);
    expect(noGateway.stderr).toContain("no gateway token");
  });

  it("serves the --allowed-hosts names, refuses others, and caps streams per client", async () => {
    const token = readFileSync(join(root, "data", "token"), "utf8").trim();
    const port = Number(new URL(url).port);
    const get = (path: string, host: string) =>
      rawRequest(port, `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${token}`);
    expect((await get("/api/health", "rudder.test")).status).toBe(200);
    expect((await get("/api/health", "evil.test")).status).toBe(421);
    const open = [0, 1].map(() => new AbortController());
    const streams = await Promise.all(
      open.map((controller) =>
        fetch(`${url}/api/channels/capped/events`, {
          headers: { authorization: `Bearer ${token}` },
          signal: controller.signal,
        }),
      ),
    );
    expect(streams.map((stream) => stream.status)).toEqual([200, 200]);
    const third = await get("/api/channels/capped/events", `127.0.0.1:${port}`);
    expect(third.status).toBe(503);
    for (const controller of open) controller.abort();
  });

  it("answers a message sent with rudder send, through a rudder agent on the demo model", async () => {
    const sent = await runToEnd([
      "send",
      "--url",
      url,
      "--data",
      join(root, "data"),
      "main",
      "hello",
    ]);
    expect(sent.stderr).toBe("");
    expect(sent.code).toBe(0);
    expect(sent.stdout).toMatch(/ started\n$/);

    const token = readFileSync(join(root, "data", "token"), "utf8").trim();
    type Message = { kind: string; text: string; state: string | null };
    const messages = await waitFor(
      async () => {
        const response = await fetch(`${url}/api/channels/main/messages`, {
          headers: { authorization: `Bearer ${token}` },
        });
        const { messages } = (await response.json()) as { messages: Message[] };
        return messages.some((message) => message.kind === "reply" || message.kind === "error")
          ? messages
          : undefined;
      },
      "a reply or an error",
      30_000,
      200,
    );
    const reply = messages.find((message) => message.kind === "reply");
    expect(reply?.text).toContain("demo");
    expect(messages[0]).toMatchObject({ kind: "user", text: "hello", state: "answered" });
  });

  it("adds, lists and removes a schedule with rudder schedule", async () => {
    const data = join(root, "data");
    const added = await runToEnd([
      "schedule",
      "add",
      "0 9 * * 1-5",
      "--channel",
      "main",
      "--url",
      url,
      "--data",
      data,
      "daily",
      "summary",
    ]);
    expect(added.stderr).toBe("");
    const id = added.stdout.split(" ")[0] ?? "";
    const listed = await runToEnd(["schedule", "list", "--url", url, "--data", data]);
    expect(listed.stdout).toContain(id);
    expect(listed.stdout).toContain("daily summary");
    const resumed = await runToEnd(["schedule", "resume", id, "--url", url, "--data", data]);
    expect(resumed.stdout).toContain(`${id} active`);
    const removed = await runToEnd(["schedule", "rm", id, "--url", url, "--data", data]);
    expect(removed.code).toBe(0);
    const again = await runToEnd(["schedule", "rm", id, "--url", url, "--data", data]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`no schedule with id ${id}`);
    const resumeGone = await runToEnd(["schedule", "resume", id, "--url", url, "--data", data]);
    expect(resumeGone.code).toBe(1);
    expect(resumeGone.stderr).toContain(`no schedule with id ${id}`);
  });

  it("rejects a bad cron expression with a one-line error naming the reason", async () => {
    const add = (cron: string) =>
      runToEnd([
        "schedule",
        "add",
        cron,
        "--channel",
        "main",
        "--url",
        url,
        "--data",
        join(root, "data"),
        "x",
      ]);
    const reasons: Array<[string, string]> = [
      ["not a cron", "invalid cron pattern"],
      ["* * * * * * *", "it has 7 fields; it needs 5"],
      ["0 0 31 2 *", "never fires"],
    ];
    for (const [cron, reason] of reasons) {
      const bad = await add(cron);
      expect(bad.code, cron).toBe(1);
      expect(bad.stderr.trim().split("\n")).toHaveLength(1);
      expect(bad.stderr).toContain(reason);
    }
  });

  it("stops on SIGTERM and leaves no agent process behind", async () => {
    const token = readFileSync(join(root, "data", "token"), "utf8").trim();
    const response = await fetch(`${url}/api/runners`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const { runners } = (await response.json()) as { runners: Array<{ pid: number | null }> };
    const pids = runners.flatMap((runner) => (runner.pid === null ? [] : [runner.pid]));
    expect(pids.length).toBeGreaterThan(0);
    expect(pids.every(isAlive)).toBe(true);
    server.child.kill("SIGTERM");
    const { code } = await server.exited;
    expect(code).toBe(0);
    expect(server.stderr()).toContain("gateway: stopped");
    expect(pids.filter(isAlive)).toEqual([]);
    // Its address goes with it: a client of the folder no longer finds it there.
    expect(existsSync(join(root, "data", "gateway-url"))).toBe(false);
  });

  it("says which address it could not reach and how to name another", async () => {
    const data = join(root, "stale-data");
    mkdirSync(data);
    writeFileSync(join(data, "token"), "t\n");
    // A gateway killed without stopping leaves its address behind; nothing listens there now.
    const closed = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, "127.0.0.1", () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    writeFileSync(join(data, "gateway-url"), `http://127.0.0.1:${closed}\n`);
    const send = await runToEnd(["send", "--data", data, "c", "hello"]);
    expect(send.code).toBe(1);
    expect(send.stderr).toBe(
      `rudder send: cannot reach the gateway at http://127.0.0.1:${closed}: is "rudder serve" running there? (--url or RUDDER_URL names another)\n`,
    );
  });
});

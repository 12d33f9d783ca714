import type { ChildProcess } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  type FakeMessagesApi,
  type ScriptStep,
  startFakeMessagesApi,
} from "../helpers/fake-messages-api.js";
import { type RudderRun, startRudder } from "../helpers/rudder-cli.js";
import { tempHome } from "../helpers/temp-folders.js";

export const STREAM_ARGS = [
  "run",
  "-p",
  "--input-format",
  "stream-json",
  "--output-format",
  "stream-json",
  "--verbose",
];

// biome-ignore lint/suspicious/noExplicitAny: output lines are whatever JSON rudder printed.
export type Line = Record<string, any>;

/** A temp workspace and home, and the environment that points rudder at the fake API. */
export interface Sandbox {
  workspace: string;
  home: string;
  env: NodeJS.ProcessEnv;
  cleanup: () => void;
}

export function makeSandbox(apiUrl: string): Sandbox {
  const { root, workspace, home, remove } = tempHome("rudder-protocol-");
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home,
    RUDDER_HOME: join(home, ".rudder"),
    TMPDIR: root,
    ANTHROPIC_BASE_URL: apiUrl,
    ANTHROPIC_API_KEY: "dummy",
    RUDDER_MAX_RETRIES: "0",
  };
  return { workspace, home, env, cleanup: remove };
}

export function writeSettings(workspace: string, settings: unknown): void {
  mkdirSync(join(workspace, ".rudder"), { recursive: true });
  writeFileSync(join(workspace, ".rudder", "settings.json"), JSON.stringify(settings));
}

/** A running `rudder` (test/helpers/rudder-cli.ts) with its stdout parsed into lines as they come. */
export class RudderChild {
  readonly child: ChildProcess;
  readonly lines: Line[] = [];
  readonly exited: Promise<number | null>;
  readonly #program: RudderRun;
  #buffer = "";
  readonly #waiters = new Set<() => void>();

  constructor(args: string[], sandbox: Sandbox) {
    this.#program = startRudder(args, { cwd: sandbox.workspace, env: sandbox.env, stdin: "pipe" });
    this.child = this.#program.child;
    this.child.stdout?.on("data", (chunk: Buffer) => {
      this.#buffer += chunk.toString("utf8");
      for (
        let index = this.#buffer.indexOf("\n");
        index !== -1;
        index = this.#buffer.indexOf("\n")
      ) {
        const text = this.#buffer.slice(0, index);
        this.#buffer = this.#buffer.slice(index + 1);
        try {
          this.lines.push(JSON.parse(text) as Line);
        } catch {
          this.lines.push({ type: "__unparsed__", text });
        }
      }
      this.#notify();
    });
    this.exited = this.#program.exited.then((exit) => {
      this.#notify();
      return exit.code;
    });
  }

  /** What it has written to stderr so far. */
  get stderr(): string {
    return this.#program.stderr();
  }

  #notify(): void {
    for (const waiter of this.#waiters) waiter();
  }

  send(line: unknown): void {
    this.child.stdin?.write(`${typeof line === "string" ? line : JSON.stringify(line)}\n`);
  }

  sendUser(text: string, uuid?: string): void {
    this.send({
      type: "user",
      message: { role: "user", content: text },
      parent_tool_use_id: null,
      session_id: "",
      ...(uuid === undefined ? {} : { uuid }),
    });
  }

  end(): void {
    this.child.stdin?.end();
  }

  ofType(type: string, subtype?: string): Line[] {
    return this.lines.filter(
      (line) => line.type === type && (subtype === undefined || line.subtype === subtype),
    );
  }

  /** Resolves with the `count`-th line matching, failing (with what was seen) after `timeoutMs`. */
  waitFor(predicate: (line: Line) => boolean, count = 1, timeoutMs = 15_000): Promise<Line> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        const found = this.lines.filter(predicate);
        if (found.length >= count) {
          cleanup();
          resolve(found[count - 1] as Line);
        } else if (this.child.exitCode !== null || this.child.signalCode !== null) {
          cleanup();
          reject(new Error(`rudder exited; lines: ${this.describe()}\nstderr: ${this.stderr}`));
        }
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`timed out; lines: ${this.describe()}\nstderr: ${this.stderr}`));
      }, timeoutMs);
      const cleanup = (): void => {
        clearTimeout(timer);
        this.#waiters.delete(check);
      };
      this.#waiters.add(check);
      check();
    });
  }

  waitForResult(count = 1): Promise<Line> {
    return this.waitFor((line) => line.type === "result", count);
  }

  describe(): string {
    return this.lines.map((line) => `${line.type}/${line.subtype ?? ""}`).join(", ");
  }

  /** Sends `signal` to its whole process group. */
  kill(signal: NodeJS.Signals = "SIGKILL"): void {
    this.#program.kill(signal);
  }
}

/** A fake API, sandboxes and children for one test file, all cleaned up by `cleanup`. */
export function protocolHarness() {
  const children: RudderChild[] = [];
  const sandboxes: Sandbox[] = [];
  const apis: FakeMessagesApi[] = [];
  return {
    async api(script: ScriptStep[] = []): Promise<FakeMessagesApi> {
      const api = await startFakeMessagesApi({ script, fallback: () => ({ text: "fallback" }) });
      apis.push(api);
      return api;
    },
    sandbox(api: FakeMessagesApi): Sandbox {
      const sandbox = makeSandbox(api.url);
      sandboxes.push(sandbox);
      return sandbox;
    },
    start(sandbox: Sandbox, args: string[] = STREAM_ARGS): RudderChild {
      const child = new RudderChild(args, sandbox);
      children.push(child);
      return child;
    },
    async cleanup(): Promise<void> {
      const running = children.splice(0);
      for (const child of running) child.kill();
      await Promise.all(running.map((child) => child.exited));
      await Promise.all(apis.splice(0).map((api) => api.close()));
      for (const sandbox of sandboxes.splice(0)) sandbox.cleanup();
    },
  };
}

import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { type FakeMessagesApi, startFakeMessagesApi } from "../helpers/fake-messages-api.js";
import { RUDDER_CLI } from "../helpers/fixtures.js";
import { waitFor } from "../helpers/wait-for.js";

const run = promisify(execFile);

const EXIT_LINE = /\[program exited with status (\d+)\]/;

/**
 * One tmux server of its own (a private socket file), so tests never touch
 * anybody else's sessions, driving one program in one pane.
 *
 * The program runs under `sh`, which prints its exit status into the pane:
 * tmux 3.3 sometimes marks a pane dead before it has reaped the process, and
 * then never reports the status.
 */
export class TmuxDriver {
  readonly socket: string;
  readonly target = "chat";

  constructor(name: string) {
    this.socket = join(tmpdir(), `rudder-tmux-${name}-${process.pid}-${Date.now()}`);
  }

  async tmux(...args: string[]): Promise<string> {
    const { stdout } = await run("tmux", ["-S", this.socket, "-f", "/dev/null", ...args]);
    return stdout;
  }

  /** Starts `command` (argv) in a detached session; the pane stays after it ends. */
  async start(command: string[], options: { cwd: string; columns?: number; rows?: number }) {
    await this.tmux(
      "new-session",
      "-d",
      "-s",
      this.target,
      "-x",
      String(options.columns ?? 160),
      "-y",
      String(options.rows ?? 50),
      "-c",
      options.cwd,
      "sh",
      "-c",
      '"$@"; echo "[program exited with status $?]"',
      "sh",
      ...command,
      ";",
      "set-option",
      "-t",
      this.target,
      "remain-on-exit",
      "on",
    );
  }

  /** The pid of the pane's shell (the program is its child). */
  async panePid(): Promise<number> {
    const text = await this.tmux("display-message", "-p", "-t", this.target, "#{pane_pid}");
    return Number(text.trim());
  }

  /** Undefined while the program runs; its exit status once it has ended. */
  async exitStatus(): Promise<number | undefined> {
    const match = EXIT_LINE.exec(await this.capture());
    return match === null ? undefined : Number(match[1]);
  }

  /** The whole pane, scrollback included. */
  async capture(): Promise<string> {
    return this.tmux("capture-pane", "-p", "-t", this.target, "-S", "-", "-E", "-");
  }

  /** Types `text` literally, then Enter unless `enter` is false. */
  async type(text: string, enter = true): Promise<void> {
    if (text !== "") await this.tmux("send-keys", "-t", this.target, "-l", text);
    if (enter) await this.tmux("send-keys", "-t", this.target, "Enter");
  }

  async key(name: string): Promise<void> {
    await this.tmux("send-keys", "-t", this.target, name);
  }

  /** Polls the pane until `test` holds; fails with the pane's text after `timeoutMs`. */
  async waitFor(
    what: string,
    test: (screen: string) => boolean,
    timeoutMs = 10_000,
  ): Promise<string> {
    let screen = "";
    return waitFor(
      async () => {
        screen = await this.capture();
        return test(screen) && screen;
      },
      () => `${what}; the pane shows:\n${screen}`,
      timeoutMs,
      50,
    );
  }

  async waitForText(text: string, timeoutMs?: number): Promise<string> {
    return this.waitFor(JSON.stringify(text), (screen) => screen.includes(text), timeoutMs);
  }

  /** Polls until the program has ended; resolves to its exit status. */
  async waitForExit(timeoutMs = 10_000): Promise<number> {
    const screen = await this.waitFor(
      "the program to exit",
      (text) => EXIT_LINE.test(text),
      timeoutMs,
    );
    return Number(EXIT_LINE.exec(screen)?.[1]);
  }

  async kill(): Promise<void> {
    await this.tmux("kill-server").catch(() => undefined);
    rmSync(this.socket, { force: true });
  }
}

/** Lines of a capture, without trailing blanks. */
export function screenLines(screen: string): string[] {
  const lines = screen.split("\n").map((line) => line.trimEnd());
  while (lines.length > 0 && lines.at(-1) === "") lines.pop();
  return lines;
}

/** True when the last line is the idle prompt `>` with nothing typed. */
export function atIdlePrompt(screen: string): boolean {
  return screenLines(screen).at(-1) === ">";
}

/** Every process below `root` now, from /proc. */
export function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const parent = Number(fields[1]);
      const list = children.get(parent) ?? [];
      list.push(Number(entry));
      children.set(parent, list);
    } catch {
      // gone while listing
    }
  }
  const found: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift() as number;
    for (const child of children.get(pid) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

/** The command line of `pid`, or "" when it is gone. */
export function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").trim();
  } catch {
    return "";
  }
}

/** A built `rudder chat` in a tmux pane, with its own fake Messages API, workspace and HOME. */
export interface ChatUnderTmux {
  api: FakeMessagesApi;
  workspace: string;
  tmux: TmuxDriver;
  /** The pane's shell; the chat and everything it starts are below it. */
  shellPid: number;
  /** Every process seen below the shell by `remember` (the chat included). */
  seen: Set<number>;
  remember(): void;
  /** Kills the tmux server, anything left of the chat, and removes the folders. */
  close(): Promise<void>;
}

export async function startChatUnderTmux(name: string, args: string[]): Promise<ChatUnderTmux> {
  const api = await startFakeMessagesApi();
  const workspace = realpathSync(mkdtempSync(join(tmpdir(), "rudder-chat-")));
  const home = mkdtempSync(join(tmpdir(), "rudder-chat-home-"));
  const tmux = new TmuxDriver(name);
  const removeAll = async (): Promise<void> => {
    await tmux.kill();
    await api.close();
    rmSync(workspace, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
  };
  let shellPid: number;
  try {
    await startChat(tmux, api, workspace, home, args);
    shellPid = await tmux.panePid();
  } catch (error) {
    await removeAll();
    throw error;
  }
  const seen = new Set<number>();
  return {
    api,
    workspace,
    tmux,
    shellPid,
    seen,
    remember: () => {
      for (const found of descendants(shellPid)) seen.add(found);
    },
    close: async () => {
      await tmux.kill();
      for (const found of seen) {
        try {
          process.kill(found, "SIGKILL");
        } catch {
          // gone, as it should be
        }
      }
      await removeAll();
    },
  };
}

function startChat(
  tmux: TmuxDriver,
  api: FakeMessagesApi,
  workspace: string,
  home: string,
  args: string[],
): Promise<void> {
  return tmux.start(
    [
      "env",
      "-i",
      `PATH=${process.env.PATH ?? "/usr/bin:/bin"}`,
      `HOME=${home}`,
      "TERM=xterm-256color",
      `ANTHROPIC_BASE_URL=${api.url}`,
      "ANTHROPIC_API_KEY=dummy",
      "RUDDER_MAX_RETRIES=0",
      process.execPath,
      RUDDER_CLI,
      "chat",
      ...args,
    ],
    { cwd: workspace },
  );
}

import type { ChildProcess } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import {
  type Client,
  ClientSideConnection,
  ndJsonStream,
  PROTOCOL_VERSION,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionNotification,
} from "@agentclientprotocol/sdk";
import { RUDDER_CLI } from "../helpers/fixtures.js";
import { type OwnedProcess, startProcess } from "../helpers/owned-process.js";
import type { Sandbox } from "../protocol/helpers.js";

export interface AcpAgentProgram {
  /** The program and its arguments; default `rudder acp`. */
  argv?: string[];
  env?: NodeJS.ProcessEnv;
  /** Offer the `fs` capability: the agent may read and write text files through the client. */
  fs?: boolean;
}

/**
 * An ACP agent (`rudder acp`, or another program such as Zed's adapter) driven by the ACP
 * SDK's own client side, as an editor drives it: the updates it streams are kept; each
 * permission request is answered by `answer` (and kept); with `fs`, file reads and writes
 * the agent asks of the client are done on disk and kept in `fileReads`.
 */
export class AcpClient {
  readonly child: ChildProcess;
  readonly connection: ClientSideConnection;
  readonly updates: SessionNotification[] = [];
  readonly permissions: RequestPermissionRequest[] = [];
  readonly exited: Promise<number | null>;
  readonly fileReads: string[] = [];
  readonly fileWrites: string[] = [];
  readonly #fs: boolean;
  readonly #program: OwnedProcess;
  answer: (request: RequestPermissionRequest) => string = () => "reject_once";
  readonly #waiters = new Set<() => void>();

  constructor(sandbox: Sandbox, program: AcpAgentProgram = {}) {
    this.#fs = program.fs === true;
    this.#program = startProcess(process.execPath, program.argv ?? [RUDDER_CLI, "acp"], {
      cwd: sandbox.workspace,
      env: program.env ?? sandbox.env,
      stdin: "pipe",
    });
    this.child = this.#program.child;
    this.exited = this.#program.exited.then((exit) => exit.code);
    const { stdin, stdout } = this.child;
    if (stdin === null || stdout === null) throw new Error("the ACP agent has no stdin or stdout");
    const client: Client = {
      sessionUpdate: async (notification) => {
        this.updates.push(notification);
        for (const waiter of this.#waiters) waiter();
      },
      requestPermission: async (request): Promise<RequestPermissionResponse> => {
        this.permissions.push(request);
        return { outcome: { outcome: "selected", optionId: this.answer(request) } };
      },
      readTextFile: async (request) => {
        this.fileReads.push(request.path);
        const lines = readFileSync(request.path, "utf8").split(/(?<=\n)/);
        const from = (request.line ?? 1) - 1;
        const to = request.limit == null ? undefined : from + request.limit;
        return { content: lines.slice(from, to).join("") };
      },
      writeTextFile: async (request) => {
        this.fileWrites.push(request.path);
        writeFileSync(request.path, request.content);
        return {};
      },
    };
    const stream = ndJsonStream(
      Writable.toWeb(stdin) as WritableStream<Uint8Array>,
      Readable.toWeb(stdout) as ReadableStream<Uint8Array>,
    );
    this.connection = new ClientSideConnection(() => client, stream);
  }

  async initialize() {
    return this.connection.initialize({
      protocolVersion: PROTOCOL_VERSION,
      clientCapabilities: {
        fs: { readTextFile: this.#fs, writeTextFile: this.#fs },
        terminal: false,
      },
    });
  }

  /** Resolves once an update matches. */
  waitForUpdate(predicate: (update: SessionNotification["update"]) => boolean): Promise<void> {
    return new Promise((resolve) => {
      const check = (): void => {
        if (this.updates.some((notification) => predicate(notification.update))) {
          this.#waiters.delete(check);
          resolve();
        }
      };
      this.#waiters.add(check);
      check();
    });
  }

  /** The updates of one kind (`tool_call`, `agent_message_chunk`, ...). */
  ofKind<K extends SessionNotification["update"]["sessionUpdate"]>(
    kind: K,
  ): Array<Extract<SessionNotification["update"], { sessionUpdate: K }>> {
    return this.updates
      .map((notification) => notification.update)
      .filter(
        (update): update is Extract<SessionNotification["update"], { sessionUpdate: K }> =>
          update.sessionUpdate === kind,
      );
  }

  /** What it has written to stderr so far. */
  get stderr(): string {
    return this.#program.stderr();
  }

  async close(): Promise<number | null> {
    this.child.stdin?.end();
    return this.exited;
  }

  /** SIGKILLs its whole process group. */
  kill(): void {
    this.#program.kill();
  }
}

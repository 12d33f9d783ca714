import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SqliteGatewayStore } from "../../src/gateway/index.js";
import { fixturePath } from "../helpers/fixtures.js";
import {
  killGroup,
  type OwnedProcess,
  outputMatching,
  startProcess,
} from "../helpers/owned-process.js";
import { isAlive } from "../helpers/process-state.js";
import { waitFor } from "../helpers/wait-for.js";
import {
  apiCaller,
  fakeLogEntries,
  fakeStarted,
  startTestGateway,
  testFolders,
} from "./helpers.js";

interface ChildGateway {
  program: OwnedProcess;
  url: string;
  token: string;
}

const children: OwnedProcess[] = [];
const orphans: number[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) child.kill();
  for (const pid of orphans.splice(0)) killGroup(pid, "SIGKILL");
});

async function startChild(dataDir: string, scenarioFile: string, fakeLog: string) {
  const program = startProcess(process.execPath, [
    fixturePath("gateway-child.mjs"),
    dataDir,
    scenarioFile,
    fakeLog,
  ]);
  children.push(program);
  const [, first] = await outputMatching(program, /^(.*)\n/);
  const { url, token } = JSON.parse(first ?? "") as { url: string; token: string };
  return { program, url, token } satisfies ChildGateway;
}

interface Message {
  id: string;
  kind: string;
  text: string;
  state: string | null;
  replyTo: string | null;
}

describe("a gateway killed with SIGKILL mid-turn", () => {
  it("answers every message exactly once after it starts again on the same data", async () => {
    const folders = testFolders("restart");
    writeFileSync(folders.scenarioFile, "timeout");
    try {
      const first = await startChild(folders.dataDir, folders.scenarioFile, folders.fakeLog);
      const api = apiCaller(first.url, first.token);
      const texts = { a1: "alpha one", a2: "alpha two", b1: "beta one" };
      const posted = {
        a1: await api<{ disposition: string }>("POST", "/api/channels/alpha/messages", {
          text: texts.a1,
        }),
        a2: await api<{ disposition: string }>("POST", "/api/channels/alpha/messages", {
          text: texts.a2,
        }),
        b1: await api<{ disposition: string }>("POST", "/api/channels/beta/messages", {
          text: texts.b1,
        }),
      };
      expect(Object.values(posted).map((response) => response.body.disposition)).toEqual([
        "started",
        "steered",
        "started",
      ]);
      await fakeStarted(folders.fakeLog, "timeout", 2);
      const sessions = await waitFor(async () => {
        const { body } = await api<{ channels: Array<{ id: string; sessionId: string | null }> }>(
          "GET",
          "/api/channels",
        );
        return body.channels.length === 2 && body.channels.every((channel) => channel.sessionId)
          ? body.channels
          : undefined;
      }, "both channels to know their sessions");
      await waitFor(async () => {
        const { body } = await api<{ messages: Message[] }>("GET", "/api/channels/alpha/messages");
        return body.messages.some((message) => message.state === "steered");
      }, "the steer stored");
      for (const entry of fakeLogEntries(folders.fakeLog)) {
        if (entry.event === "start") orphans.push(entry.pid as number);
      }

      first.program.kill();
      await first.program.exited;
      // The agents run in their own process groups and outlive the killed gateway.
      for (const pid of orphans) killGroup(pid, "SIGKILL");

      writeFileSync(folders.scenarioFile, "normal");
      const second = await startChild(folders.dataDir, folders.scenarioFile, folders.fakeLog);
      const again = apiCaller(second.url, second.token);
      const all = async () => [
        ...(await again<{ messages: Message[] }>("GET", "/api/channels/alpha/messages")).body
          .messages,
        ...(await again<{ messages: Message[] }>("GET", "/api/channels/beta/messages")).body
          .messages,
      ];
      const messages = await waitFor(async () => {
        const current = await all();
        const users = current.filter((message) => message.kind === "user");
        return users.length === 3 && users.every((message) => message.state === "answered")
          ? current
          : undefined;
      }, "every message answered after the restart");

      const replies = messages.filter((message) => message.kind === "reply");
      for (const text of Object.values(texts)) {
        expect(
          replies.filter((reply) => reply.text.includes(text)),
          text,
        ).toHaveLength(1);
      }
      expect(messages.filter((message) => message.kind === "error")).toEqual([]);
      const resumedArgs = fakeLogEntries(folders.fakeLog)
        .filter((entry) => entry.event === "start" && entry.scenario === "normal")
        .map((entry) => (entry.args as string[]).join(" "));
      for (const channel of sessions) {
        expect(resumedArgs.some((args) => args.includes(`--resume ${channel.sessionId}`))).toBe(
          true,
        );
      }

      second.program.kill("SIGTERM");
      await second.program.exited;
    } finally {
      folders.remove();
    }
  });
});

describe("the agents of a gateway killed with SIGKILL", () => {
  // Linux's parent-death signal, set through util-linux's setpriv (Debian's essential util-linux).
  it.runIf(existsSync("/usr/bin/setpriv"))(
    "are sent SIGTERM at once, not left to run what they were given for no one",
    async () => {
      const folders = testFolders("parent-death");
      // `timeout`: each agent hangs in its turn, so only a signal ends it.
      writeFileSync(folders.scenarioFile, "timeout");
      try {
        const gateway = await startChild(folders.dataDir, folders.scenarioFile, folders.fakeLog);
        const api = apiCaller(gateway.url, gateway.token);
        for (const channel of ["one", "two"]) {
          await api("POST", `/api/channels/${channel}/messages`, { text: `hello ${channel}` });
        }
        await fakeStarted(folders.fakeLog, "timeout", 2);
        const agents = fakeLogEntries(folders.fakeLog)
          .filter((entry) => entry.event === "start")
          .map((entry) => entry.pid as number);
        orphans.push(...agents);
        expect(agents.every(isAlive)).toBe(true);

        gateway.program.kill();
        await gateway.program.exited;
        // In their own process groups, the group's SIGKILL missed them; the kernel's signal did not.
        await waitFor(() => agents.every((pid) => !isAlive(pid)), "the agents gone", 5000);
      } finally {
        folders.remove();
      }
    },
  );
});

describe("a gateway closed mid-turn", () => {
  it("leaves the message unanswered, without an error, for the next start to answer", async () => {
    const gateway = await startTestGateway({ prefix: "graceful", scenario: "timeout" });
    try {
      const posted = await gateway.api<{ id: string }>("POST", "/api/channels/calm/messages", {
        text: "interrupted by a shutdown",
      });
      await fakeStarted(gateway.fakeLog, "timeout");
      await gateway.close();
      gateway.setScenario("normal");
      const again = await startTestGateway({ prefix: "graceful-again", dataDir: gateway.dataDir });
      try {
        const messages = await waitFor(async () => {
          const all = await again.messages("calm");
          return all.some((message) => message.kind === "reply") ? all : undefined;
        }, "the message answered after the restart");
        expect(messages.map((message) => [message.kind, message.state])).toEqual([
          ["user", "answered"],
          ["reply", null],
        ]);
        expect(messages[0]?.id).toBe(posted.body.id);
      } finally {
        await again.cleanup();
      }
    } finally {
      await gateway.cleanup();
    }
  });
});

describe("a start with work left by an earlier run", () => {
  it("retries deferred messages after their reset and gives up on messages at a delivery cap", async () => {
    const folders = testFolders("leftover");
    try {
      const store = new SqliteGatewayStore(join(folders.dataDir, "gateway.db"));
      const deferred = await store.insertUserMessage("waiting", "deferred earlier", "http");
      await store.settle({
        messageIds: [deferred.id],
        state: "deferred",
        reply: { kind: "fallback", text: "rate limit" },
        retryAt: new Date(Date.now() - 1000).toISOString(),
      });
      const stuck = await store.insertUserMessage("stuck", "crashes every gateway", "http");
      for (let run = 0; run < 5; run += 1) {
        await store.setMessageState(stuck.id, "received", `run-${run}`);
        await store.countStarted(stuck.id, `run-${run}`);
      }
      const unseen = await store.insertUserMessage("unseen", "never read, every time", "http");
      for (let run = 0; run < 20; run += 1)
        await store.setMessageState(unseen.id, "received", `run-${run}`);
      const twice = await store.insertUserMessage("twice", "handed over twice", "http");
      for (let run = 0; run < 2; run += 1)
        await store.setMessageState(twice.id, "received", `run-${run}`);
      await store.close();

      const gateway = await startTestGateway({ prefix: "leftover", dataDir: folders.dataDir });
      try {
        const waiting = await waitFor(async () => {
          const all = await gateway.messages("waiting");
          return all.some((message) => message.kind === "reply") ? all : undefined;
        }, "the deferred message answered");
        expect(waiting.map((message) => [message.kind, message.state])).toEqual([
          ["user", "answered"],
          ["fallback", null],
          ["reply", null],
        ]);
        const gaveUp = await gateway.messages("stuck");
        expect(gaveUp.map((message) => [message.kind, message.state])).toEqual([
          ["user", "failed"],
          ["error", null],
        ]);
        expect(gaveUp[1]?.text).toContain("after 5 deliveries");
        const neverRead = await gateway.messages("unseen");
        expect(neverRead.map((message) => [message.kind, message.state])).toEqual([
          ["user", "failed"],
          ["error", null],
        ]);
        expect(neverRead[1]?.text).toContain("after 20 deliveries");
        const replayed = await waitFor(async () => {
          const all = await gateway.messages("twice");
          return all.some((message) => message.kind === "reply") ? all : undefined;
        }, "the message delivered twice answered");
        expect(replayed.map((message) => [message.kind, message.state])).toEqual([
          ["user", "answered"],
          ["reply", null],
        ]);
      } finally {
        await gateway.cleanup();
      }
    } finally {
      folders.remove();
    }
  });
});

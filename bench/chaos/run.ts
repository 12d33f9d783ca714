/**
 * `npm run chaos`: the gateway under faults and abuse, on loopback, in a few minutes. Runs each
 * scenario (gateway SIGKILLs and restarts, three workers on PostgreSQL with one SIGKILLed
 * mid-burst, three workers whose PostgreSQL is stopped and started again mid-load, twenty
 * Telegram chats, twenty Slack threads and twenty Discord threads and DMs through the chat kit
 * (`chat-chaos.ts`) with the gateway SIGKILLed and the platform's API failing, an agent
 * SIGKILLed mid-tool, a tool output flood,
 * SQLite's gateway.db locked by another process and its disk full,
 * a 20 MB reply from a rudder agent and a 20 MB line from a Claude CLI, ten channels each
 * given a 20 MB reply (memory back once idle), stalls and hangs (a model stream gone quiet or
 * never answered, a hung MCP tool, a hung hook, an MCP server dead), a burst of 400 one-shots
 * against --max-agents, an HTTP fuzz of every
 * route, slow clients, SSE floods) and prints one table of figures, each with its goal; exits 1
 * when a goal is missed. CHAOS_SIZE=small runs smaller sizes; CHAOS_ONLY=<part of a name>
 * runs only the scenarios whose name holds it. `--write` (`npm run chaos -- --write`) also saves
 * the table, with the date, the commit, the machine and the sizes, as docs/benchmarks/chaos.md.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { startPostgresCluster } from "../../test/helpers/postgres-cluster.js";
import { GatewayProcess } from "../gateway-process.js";
import { resultsMarkdown, runContext, writeResultsFile } from "../results-file.js";
import { bigReplies } from "./big-replies.js";
import { clusterBurst } from "./cluster-burst.js";
import { databaseOutage } from "./database-outage.js";
import { discordThreads } from "./discord-threads.js";
import { type Figure, figure, table } from "./figures.js";
import { hangs } from "./hangs.js";
import { httpFuzz, slowClients, sseCaps, sseFlood } from "./http-abuse.js";
import { oneShotBurst } from "./one-shot-burst.js";
import { overCapLine } from "./over-cap.js";
import { restarts } from "./restarts.js";
import { agentKilledMidTool, longReply, toolOutputFlood } from "./rudder-agents.js";
import { slackThreads } from "./slack-threads.js";
import { diskFullFault, lockFault, sqliteFault } from "./sqlite-faults.js";
import { telegramChats } from "./telegram-chats.js";

const FAKE_CLAUDE = join(import.meta.dirname, "..", "..", "test", "fixtures", "fake-claude");
const small = process.env.CHAOS_SIZE === "small";
const size = small
  ? {
      messages: 30,
      channels: 4,
      burstChannels: 12,
      burstPerChannel: 4,
      outageChannels: 8,
      outagesMs: [1000, 5000],
      storeFaultSeconds: 5,
      kills: 2,
      floodMb: 20,
      replyMb: 20,
      bigReplies: 4,
      hangChannels: 2,
      oneShots: 100,
      streams: 300,
      rounds: 2,
      slow: 5,
      telegramChats: 4,
      telegramPerChat: 3,
    }
  : {
      messages: 200,
      channels: 20,
      burstChannels: 30,
      burstPerChannel: 8,
      outageChannels: 30,
      outagesMs: [1000, 2000, 1000, 6000, 1500],
      storeFaultSeconds: 30,
      kills: 5,
      floodMb: 200,
      replyMb: 20,
      bigReplies: 10,
      hangChannels: 4,
      oneShots: 400,
      streams: 3000,
      rounds: 3,
      slow: 50,
      telegramChats: 20,
      telegramPerChat: 5,
    };

const only = process.env.CHAOS_ONLY;

async function scenario(name: string, run: () => Promise<Figure[]>): Promise<Figure[]> {
  if (only && !name.includes(only)) return [];
  const started = Date.now();
  process.stderr.write(`chaos: ${name} ...\n`);
  try {
    const figures = await run();
    process.stderr.write(`chaos: ${name} done in ${((Date.now() - started) / 1000).toFixed(0)}s\n`);
    return figures;
  } catch (error) {
    return [figure(name, "scenario failed", String(error).slice(0, 120), "runs", false)];
  }
}

const root = mkdtempSync(join(tmpdir(), "rudder-chaos-"));
const figures: Figure[] = [];
const started = Date.now();
const context = runContext();
try {
  figures.push(...(await scenario("restarts", () => restarts({ root, ...size }))));
  figures.push(
    ...(await scenario("cluster burst", async () => {
      const postgres = await startPostgresCluster();
      try {
        return await clusterBurst({
          root,
          postgres,
          channels: size.burstChannels,
          perChannel: size.burstPerChannel,
        });
      } finally {
        await postgres.destroy();
      }
    })),
  );
  figures.push(
    ...(await scenario("database outage", async () => {
      const postgres = await startPostgresCluster();
      try {
        return await databaseOutage({
          root,
          postgres,
          channels: size.outageChannels,
          outagesMs: size.outagesMs,
        });
      } finally {
        await postgres.destroy();
      }
    })),
  );
  // Channels enough that the backlog of a fault is answered within the bound.
  const storeFault = { root, channels: 20, faultSeconds: size.storeFaultSeconds };
  figures.push(
    ...(await scenario("SQLite lock", () =>
      sqliteFault(lockFault(), { ...storeFault, boundSeconds: 20 }),
    )),
  );
  if (process.getuid?.() === 0) {
    figures.push(
      ...(await scenario("SQLite disk full", () =>
        sqliteFault(diskFullFault(), { ...storeFault, boundSeconds: 20 }),
      )),
    );
  } else {
    figures.push(figure("SQLite disk full", "skipped: mounting a tmpfs needs root", "-", ""));
  }
  figures.push(
    ...(await scenario("Telegram chats", () =>
      telegramChats({
        root,
        chats: size.telegramChats,
        perChat: size.telegramPerChat,
        kills: size.kills,
        failRate: 0.1,
      }),
    )),
  );
  figures.push(
    ...(await scenario("Slack threads", () =>
      slackThreads({
        root,
        threads: size.telegramChats,
        perThread: size.telegramPerChat,
        kills: size.kills,
        failRate: 0.1,
      }),
    )),
  );
  figures.push(
    ...(await scenario("Discord threads", () =>
      discordThreads({
        root,
        conversations: size.telegramChats,
        perConversation: size.telegramPerChat,
        kills: size.kills,
        failRate: 0.1,
      }),
    )),
  );
  figures.push(...(await scenario("agent SIGKILL mid-tool", () => agentKilledMidTool(root))));
  figures.push(...(await scenario("tool output flood", () => toolOutputFlood(root, size.floodMb))));
  figures.push(...(await scenario("long reply", () => longReply(root, size.replyMb))));
  figures.push(
    ...(await scenario("big replies", () => bigReplies(root, size.bigReplies, size.replyMb))),
  );
  figures.push(...(await scenario("over-cap line", () => overCapLine(root))));
  figures.push(...(await scenario("stalls and hangs", () => hangs(root, size.hangChannels))));
  figures.push(...(await scenario("one-shot burst", () => oneShotBurst(root, size.oneShots))));
  figures.push(
    ...(await scenario("HTTP", async () => {
      const gateway = await GatewayProcess.start({
        dataDir: join(root, "http"),
        port: 0,
        engine: { claudeBin: FAKE_CLAUDE },
      });
      try {
        return [...(await httpFuzz(gateway)), ...(await slowClients(gateway, size.slow))];
      } finally {
        await gateway.stop();
      }
    })),
  );
  const settleMs = small ? 2000 : 20_000;
  figures.push(
    ...(await scenario("SSE flood", () =>
      sseFlood(root, size.streams, size.rounds, settleMs, "default"),
    )),
  );
  if (!small) {
    figures.push(
      ...(await scenario("SSE flood, MALLOC_ARENA_MAX=2", () =>
        sseFlood(root, size.streams, size.rounds, settleMs, "MALLOC_ARENA_MAX=2", {
          ...process.env,
          MALLOC_ARENA_MAX: "2",
        }),
      )),
    );
  }
  figures.push(...(await scenario("SSE caps", () => sseCaps(root))));
} finally {
  rmSync(root, { recursive: true, force: true });
}
const summary = `${figures.filter((each) => each.ok === false).length} goals missed; ${((Date.now() - started) / 1000).toFixed(0)} s in all`;
console.log(table(figures));
console.log(`\n${summary}`);
process.exitCode = figures.some((each) => each.ok === false) ? 1 : 0;
if (process.argv.includes("--write")) {
  const settings = [
    small ? "CHAOS_SIZE=small" : "",
    only ? `CHAOS_ONLY=${JSON.stringify(only)}` : "",
  ].filter((setting) => setting !== "");
  const markdown = resultsMarkdown(
    `npm run chaos${settings.length > 0 ? ` (${settings.join(", ")})` : ""}`,
    `${settings.map((setting) => `${setting} `).join("")}npm run chaos -- --write`,
    context,
    (Date.now() - started) / 1000,
    `${table(figures)}\n\n${summary}`,
    process.exitCode,
    "markdown",
  );
  console.log(`wrote ${relative(process.cwd(), writeResultsFile("chaos", markdown))}`);
}

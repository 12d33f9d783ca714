/**
 * The API's channel routes (token needed): the channels, a channel's messages in and out,
 * its commands (compact, reset, interrupt) and its event stream.
 */
import { Hono } from "hono";
import * as v from "valibot";
import type { ProcessPool } from "../../agents/agent-process.js";
import type { SourceAttachments } from "../../channel-source.js";
import type { EventBus } from "../../event-bus.js";
import type { MessageAttachment } from "../../events.js";
import type { CommandOutcome } from "../../routing/channel-commands.js";
import type { Router } from "../../routing/router.js";
import type { GatewayStore } from "../../store/store.js";
import type { ChannelWorktrees } from "../../worktrees/channel-worktrees.js";
import type { HttpChannelSource } from "../http-source.js";
import { channelEvents } from "../sse-route.js";
import type { StreamLimits } from "../stream-limits.js";
import { TrustedProxies } from "../trusted-proxies.js";
import { ApiError, channelParam, readJson } from "./api-request.js";
import { readMessageBody } from "./message-body.js";

export interface ChannelRoutesOptions {
  source: HttpChannelSource;
  router: Router;
  store: GatewayStore;
  bus: EventBus;
  pool: ProcessPool;
  /** The channels' worktrees, listed with their state. */
  worktrees?: ChannelWorktrees;
  /** Aborted when the gateway begins to shut down. */
  closing: AbortSignal;
  heartbeatMs?: number;
  /** The caps on open event streams. */
  streamLimits: StreamLimits;
  /** An event stream's client reading this far behind is cut off (see `MAX_UNREAD_BYTES`). */
  maxUnreadEventBytes?: number;
  /** The name of the binding a channel uses. */
  bindingOf?: (channelId: string) => string;
  /** Whose `X-Forwarded-For` names the client (default: nobody's; the socket's peer is). */
  trustedProxies?: TrustedProxies;
  /** Attachments of posted messages: into the channel's workspace and to its model. */
  media?: SourceAttachments;
}

const resetBody = v.object({
  confirm: v.optional(v.boolean("confirm must be true or false")),
});
const compactBody = v.object({
  instructions: v.optional(
    v.pipe(v.string(), v.maxLength(4000, "instructions must be at most 4000 characters")),
  ),
});

const modelBody = v.object({
  model: v.pipe(
    v.string(),
    v.minLength(1, "model must not be empty"),
    v.maxLength(200, "model must be at most 200 characters"),
  ),
});

/** The peer's address as @hono/node-server passes it (its `incoming` request). */
function peerAddress(env: unknown): string | undefined {
  const incoming = (env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)
    ?.incoming;
  return incoming?.socket?.remoteAddress;
}

export function channelRoutes(options: ChannelRoutesOptions): Hono {
  const { router, store, bus, pool } = options;
  const routes = new Hono();

  routes.get("/channels", async (context) => {
    const channels = await store.listChannels();
    const live = new Set(pool.list().map((runner) => runner.channelId));
    const { worktrees } = options;
    const states = await Promise.all(
      channels.map((channel) => worktrees?.status(channel.id) ?? Promise.resolve(null)),
    );
    return context.json({
      channels: channels.map((channel, index) => ({
        ...channel,
        inflight: router.inflight(channel.id),
        live: live.has(channel.id),
        binding: options.bindingOf?.(channel.id) ?? "defaults",
        ...(states[index] ? { worktree: states[index] } : {}),
      })),
    });
  });

  routes.post("/channels/:id/messages", async (context) => {
    const channelId = channelParam(context.req.param("id"));
    const { media } = options;
    const body = await readMessageBody(context.req.raw, media?.maxBytes ?? 0);
    let text = body.text ?? "";
    let attachments: MessageAttachment[] = [];
    if (body.files.length > 0) {
      if (!media) throw new ApiError("this gateway takes no attachments");
      const received = await media.receive(channelId, text, body.files, options.closing);
      if ("answer" in received) throw new ApiError(received.answer);
      ({ text, attachments } = received);
    }
    const via = body.via === "cli" ? "cli" : "http";
    const delivery = await options.source.deliver(channelId, text, via, attachments);
    return context.json(delivery, 202);
  });

  /** A command's answer once it is done: what it did and its divider, or why it failed. */
  const command = async (
    channelId: string,
    run: () => Promise<CommandOutcome>,
  ): Promise<Omit<Extract<CommandOutcome, { ok: true }>, "ok">> => {
    if ((await store.getChannel(channelId)) === null) {
      throw new ApiError(`no channel ${channelId}`, 404);
    }
    const outcome = await run();
    if (!outcome.ok) throw new ApiError(outcome.error, outcome.status);
    const { ok: _, ...answer } = outcome;
    return answer;
  };

  routes.post("/channels/:id/compact", async (context) => {
    const channelId = channelParam(context.req.param("id"));
    const { instructions } = await readJson(context.req.raw, compactBody, true);
    return context.json(await command(channelId, () => router.compact(channelId, instructions)));
  });

  /** The page's Stop: interrupts the running turn; the agent process lives on. */
  routes.post("/channels/:id/interrupt", async (context) => {
    const channelId = channelParam(context.req.param("id"));
    if ((await store.getChannel(channelId)) === null) {
      throw new ApiError(`no channel ${channelId}`, 404);
    }
    if (!(await router.interrupt(channelId))) {
      throw new ApiError(`no turn is running in channel ${channelId} on this gateway`, 409);
    }
    return context.json({ interrupted: true });
  });

  /** `/status` and `/model` need no stored channel: a new one's binding answers. */
  const about = async (run: () => Promise<CommandOutcome>) => {
    const outcome = await run();
    if (!outcome.ok) throw new ApiError(outcome.error, outcome.status);
    const { ok: _, message: __, ...answer } = outcome;
    return answer;
  };

  routes.get("/channels/:id/status", async (context) => {
    const channelId = channelParam(context.req.param("id"));
    return context.json(await about(() => router.status(channelId)));
  });

  routes.post("/channels/:id/model", async (context) => {
    const channelId = channelParam(context.req.param("id"));
    const { model } = await readJson(context.req.raw, modelBody);
    return context.json(await about(() => router.model(channelId, model)));
  });

  routes.post("/channels/:id/reset", async (context) => {
    const channelId = channelParam(context.req.param("id"));
    const { confirm } = await readJson(context.req.raw, resetBody, true);
    return context.json(await command(channelId, () => router.reset(channelId, confirm === true)));
  });

  routes.get("/channels/:id/messages", async (context) => {
    const channelId = channelParam(context.req.param("id"));
    const limitText = context.req.query("limit");
    const limit = limitText === undefined ? undefined : Number(limitText);
    if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 1)) {
      throw new ApiError("limit must be a positive integer");
    }
    const messages = await store.listMessages(channelId, limit);
    const ended = messages.filter(
      (message) => message.kind === "reply" || message.kind === "error",
    );
    const displays = await store.turnDisplays().list(ended.map((message) => message.id));
    return context.json({
      messages: messages.map((message) => {
        const display = displays.get(message.id);
        return display === undefined ? message : { ...message, display: JSON.parse(display) };
      }),
    });
  });

  routes.get("/channels/:id/events", (context) =>
    channelEvents(context, {
      bus,
      channelId: channelParam(context.req.param("id")),
      closing: options.closing,
      heartbeatMs: options.heartbeatMs ?? 15_000,
      limits: options.streamLimits,
      ...(options.maxUnreadEventBytes ? { maxUnreadBytes: options.maxUnreadEventBytes } : {}),
      client: (options.trustedProxies ?? TrustedProxies.none).client(
        peerAddress(context.env),
        context.req.header("x-forwarded-for"),
      ),
    }),
  );
  return routes;
}

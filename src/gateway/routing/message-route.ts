import type { ChannelCommand } from "./channel-command.js";
import type { ChannelState } from "./channel-state.js";

/**
 * Which way a message goes on its channel: a command (`/compact`, `/clear`) queues for the
 * idle agent; behind a running command it is `queue`d; while the channel is rate limited it
 * is `defer`red; while a finished (or abandoned) turn is settled it waits for the `next` one;
 * it `steer`s the turn running; at the pool's cap it `wait`s for a process; else it `start`s
 * a turn.
 */
export type MessageRoute = "command" | "queue" | "defer" | "next" | "steer" | "wait" | "start";

/** What the route depends on beside the channel's own state. */
export interface RouteConditions {
  /** Whether the channel's messages are deferred until a rate limit's reset. */
  rateLimited: boolean;
  /** Whether a new turn of the channel must wait for an agent process (`AgentSlots`). */
  mustWait: (channel: ChannelState) => boolean;
}

/** The route of a message (`command`: what it says, if a command) on a channel now. */
export function messageRoute(
  channel: ChannelState,
  command: ChannelCommand | null,
  conditions: RouteConditions,
): MessageRoute {
  if (command !== null) return "command";
  if (channel.commands.busy) return "queue";
  if (conditions.rateLimited) return "defer";
  // A turn being settled: the message steers the next one, or starts it. So does one being
  // abandoned (its lease ran out): it settles nothing, so nothing more may join it.
  if (channel.turn?.ended || channel.turn?.abandoned) return "next";
  if (channel.turn) return "steer";
  return conditions.mustWait(channel) ? "wait" : "start";
}

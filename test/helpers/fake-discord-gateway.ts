/**
 * The gateway half of the fake Discord (test/helpers/fake-discord.ts): a WebSocket endpoint
 * that speaks Discord's gateway protocol (v10, JSON, no compression) well enough for
 * `discord.js` unchanged: HELLO, IDENTIFY answered with READY and a GUILD_CREATE per guild (or
 * closed 4004 for another token, 4014 when the Message Content intent is asked for but not
 * enabled), heartbeats acknowledged, dispatches numbered per session and kept so a RESUME
 * replays what the session missed and then says RESUMED (an unknown session gets INVALID
 * SESSION). A test drops the socket (`drop`), asks for a reconnect (op 7) or invalidates the
 * session (op 9).
 */
import type { Server } from "node:http";
import { type WebSocket, WebSocketServer } from "ws";

/** Discord's Message Content intent (privileged). */
export const MESSAGE_CONTENT_INTENT = 1 << 15;

interface Session {
  id: string;
  /** Every dispatch of this session, numbered from 1. */
  events: Array<{ s: number; t: string; d: unknown }>;
  socket: WebSocket | undefined;
  valid: boolean;
}

export interface FakeGatewayOptions {
  token: string;
  /** Whether the application may use the Message Content intent; default true. */
  messageContent: () => boolean;
  /** The READY payload's user and application, and the guilds' GUILD_CREATE payloads. */
  ready: () => { user: unknown; application: unknown; guilds: unknown[] };
  url: () => string;
}

export interface FakeGateway {
  /** Sends a dispatch to every live session (kept for their RESUME when not connected). */
  dispatch(type: string, data: unknown): void;
  /** Sessions connected and identified now. */
  connected(): number;
  identifies: number;
  resumes: number;
  /** Closes every socket without a close frame (a dropped connection). */
  drop(): void;
  /** Asks every client to reconnect (op 7). */
  reconnect(): void;
  /** Ends every session (op 9, not resumable): the client identifies anew. */
  invalidate(): void;
  /** While down, new sockets are refused (closed at once); `up` lets them in again. */
  down(): void;
  up(): void;
  close(): Promise<void>;
}

export function startFakeGateway(server: Server, options: FakeGatewayOptions): FakeGateway {
  const wss = new WebSocketServer({ noServer: true });
  const sessions = new Map<string, Session>();
  let sessionCounter = 0;
  let isDown = false;
  const state = { identifies: 0, resumes: 0 };

  server.on("upgrade", (request, socket, head) => {
    if (!request.url?.startsWith("/gateway")) return socket.destroy();
    wss.handleUpgrade(request, socket, head, (ws) => {
      if (isDown) return ws.terminate();
      accept(ws);
    });
  });

  const send = (ws: WebSocket, payload: unknown) => {
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(payload));
  };

  const deliver = (session: Session, type: string, data: unknown) => {
    const event = { s: session.events.length + 1, t: type, d: data };
    session.events.push(event);
    if (session.socket) send(session.socket, { op: 0, ...event });
  };

  function accept(ws: WebSocket): void {
    let session: Session | undefined;
    send(ws, { op: 10, d: { heartbeat_interval: 41_250 }, s: null, t: null });
    ws.on("message", (raw) => {
      let payload: { op: number; d: Record<string, unknown> | null };
      try {
        payload = JSON.parse(String(raw));
      } catch {
        return ws.close(4002, "Error while decoding payload.");
      }
      const data = payload.d ?? {};
      switch (payload.op) {
        case 1:
          return send(ws, { op: 11, d: null, s: null, t: null });
        case 2: {
          if (data.token !== options.token) return ws.close(4004, "Authentication failed.");
          const intents = Number(data.intents ?? 0);
          if (intents & MESSAGE_CONTENT_INTENT && !options.messageContent()) {
            return ws.close(4014, "Disallowed intent(s).");
          }
          state.identifies += 1;
          sessionCounter += 1;
          session = { id: `session-${sessionCounter}`, events: [], socket: ws, valid: true };
          sessions.set(session.id, session);
          const ready = options.ready();
          deliver(session, "READY", {
            v: 10,
            user: ready.user,
            application: ready.application,
            guilds: ready.guilds.map((guild) => ({
              id: (guild as { id: string }).id,
              unavailable: true,
            })),
            session_id: session.id,
            resume_gateway_url: options.url(),
            shard: [0, 1],
          });
          for (const guild of ready.guilds) deliver(session, "GUILD_CREATE", guild);
          return;
        }
        case 6: {
          if (data.token !== options.token) return ws.close(4004, "Authentication failed.");
          const known = sessions.get(String(data.session_id));
          if (!known?.valid) return send(ws, { op: 9, d: false, s: null, t: null });
          state.resumes += 1;
          known.socket?.terminate();
          known.socket = ws;
          session = known;
          const after = Number(data.seq ?? 0);
          for (const event of known.events) if (event.s > after) send(ws, { op: 0, ...event });
          deliver(known, "RESUMED", {});
          return;
        }
        default:
          return;
      }
    });
    ws.on("close", () => {
      if (session?.socket === ws) session.socket = undefined;
    });
    ws.on("error", () => undefined);
  }

  return {
    dispatch(type, data) {
      for (const session of sessions.values()) if (session.valid) deliver(session, type, data);
    },
    connected: () => [...sessions.values()].filter((session) => session.socket).length,
    get identifies() {
      return state.identifies;
    },
    get resumes() {
      return state.resumes;
    },
    drop() {
      for (const session of sessions.values()) session.socket?.terminate();
    },
    reconnect() {
      for (const session of sessions.values()) {
        if (session.socket) send(session.socket, { op: 7, d: null, s: null, t: null });
      }
    },
    invalidate() {
      for (const session of sessions.values()) {
        session.valid = false;
        if (session.socket) send(session.socket, { op: 9, d: false, s: null, t: null });
      }
    },
    down() {
      isDown = true;
      for (const session of sessions.values()) {
        session.valid = false;
        session.socket?.terminate();
      }
    },
    up() {
      isDown = false;
    },
    async close() {
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}

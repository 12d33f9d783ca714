/**
 * The objects of the fake Discord (test/helpers/fake-discord.ts) in the API's own shapes
 * (snake_case, snowflake strings): users, guilds with their channels and threads, messages
 * and interactions, filled enough that `discord.js` builds its structures from them.
 */

/** Discord's epoch (2015-01-01), the base of snowflakes. */
const DISCORD_EPOCH = 1_420_070_400_000n;
let counter = 0n;

/** A new snowflake of the present time, increasing within this process. */
export function snowflake(): string {
  counter = (counter + 1n) % 4096n;
  return String(((BigInt(Date.now()) - DISCORD_EPOCH) << 22n) | counter);
}

export interface FakeUser {
  id: string;
  username: string;
  global_name: string | null;
  discriminator: string;
  avatar: null;
  bot?: boolean;
}

export function user(id: string, username: string, bot = false): FakeUser {
  return {
    id,
    username,
    global_name: bot ? null : username.charAt(0).toUpperCase() + username.slice(1),
    discriminator: "0",
    avatar: null,
    ...(bot ? { bot: true } : {}),
  };
}

export interface FakeChannel {
  id: string;
  type: number;
  guild_id?: string;
  parent_id?: string | null;
  name?: string;
  owner_id?: string;
  recipients?: FakeUser[];
  thread_metadata?: { archived: boolean; auto_archive_duration: number; locked: boolean };
  position?: number;
  permission_overwrites?: unknown[];
  last_message_id?: string | null;
}

export const CHANNEL_TYPE = { text: 0, dm: 1, publicThread: 11, forum: 15 } as const;

export function textChannel(id: string, guildId: string, name: string, type = 0): FakeChannel {
  return {
    id,
    type,
    guild_id: guildId,
    name,
    position: 0,
    parent_id: null,
    permission_overwrites: [],
    last_message_id: null,
  };
}

export function threadChannel(
  id: string,
  guildId: string,
  parentId: string,
  name: string,
  ownerId: string,
): FakeChannel {
  return {
    id,
    type: CHANNEL_TYPE.publicThread,
    guild_id: guildId,
    parent_id: parentId,
    name,
    owner_id: ownerId,
    thread_metadata: { archived: false, auto_archive_duration: 1440, locked: false },
    last_message_id: null,
  };
}

export function guildCreate(
  id: string,
  ownerId: string,
  channels: FakeChannel[],
  threads: FakeChannel[],
): Record<string, unknown> {
  return {
    id,
    name: "rudder test guild",
    icon: null,
    owner_id: ownerId,
    unavailable: false,
    member_count: 3,
    large: false,
    features: [],
    joined_at: new Date().toISOString(),
    roles: [
      {
        id,
        name: "@everyone",
        permissions: "0",
        position: 0,
        color: 0,
        hoist: false,
        managed: false,
        mentionable: false,
        flags: 0,
      },
    ],
    emojis: [],
    stickers: [],
    channels: channels.map(({ guild_id: _guild, ...channel }) => channel),
    threads,
    members: [],
    presences: [],
    voice_states: [],
    stage_instances: [],
    guild_scheduled_events: [],
    soundboard_sounds: [],
  };
}

export interface FakeAttachment {
  id: string;
  filename: string;
  size: number;
  url: string;
  proxy_url: string;
  content_type?: string;
}

export interface FakeMessage {
  id: string;
  channel_id: string;
  guild_id?: string;
  author: FakeUser;
  member?: { roles: string[]; joined_at: string; deaf: boolean; mute: boolean; flags: number };
  content: string;
  timestamp: string;
  edited_timestamp: string | null;
  tts: boolean;
  mention_everyone: boolean;
  mentions: FakeUser[];
  mention_roles: string[];
  attachments: FakeAttachment[];
  embeds: unknown[];
  components: unknown[];
  pinned: boolean;
  type: number;
  flags: number;
  message_reference?: { message_id: string; channel_id: string; guild_id?: string };
  referenced_message?: FakeMessage | null;
}

export function message(fields: {
  channelId: string;
  guildId: string | undefined;
  author: FakeUser;
  content: string;
  mentions?: FakeUser[];
  roles?: string[];
  attachments?: FakeAttachment[];
  components?: unknown[];
  replyTo?: FakeMessage | undefined;
}): FakeMessage {
  const id = snowflake();
  return {
    id,
    channel_id: fields.channelId,
    ...(fields.guildId === undefined
      ? {}
      : {
          guild_id: fields.guildId,
          member: {
            roles: fields.roles ?? [],
            joined_at: new Date().toISOString(),
            deaf: false,
            mute: false,
            flags: 0,
          },
        }),
    author: fields.author,
    content: fields.content,
    timestamp: new Date().toISOString(),
    edited_timestamp: null,
    tts: false,
    mention_everyone: false,
    mentions: fields.mentions ?? [],
    mention_roles: [],
    attachments: fields.attachments ?? [],
    embeds: [],
    components: fields.components ?? [],
    pinned: false,
    type: fields.replyTo ? 19 : 0,
    flags: 0,
    ...(fields.replyTo
      ? {
          message_reference: {
            message_id: fields.replyTo.id,
            channel_id: fields.channelId,
            ...(fields.guildId === undefined ? {} : { guild_id: fields.guildId }),
          },
          referenced_message: fields.replyTo,
        }
      : {}),
  };
}

/** An INTERACTION_CREATE payload: a slash command (type 2) or a button press (type 3). */
export function interaction(fields: {
  applicationId: string;
  type: 2 | 3;
  channel: FakeChannel;
  user: FakeUser;
  roles: string[];
  data: Record<string, unknown>;
  message?: FakeMessage;
}): Record<string, unknown> & { id: string; token: string } {
  const guildId = fields.channel.guild_id;
  return {
    id: snowflake(),
    application_id: fields.applicationId,
    type: fields.type,
    token: `interaction-token-${snowflake()}`,
    version: 1,
    channel_id: fields.channel.id,
    channel: fields.channel,
    ...(guildId === undefined
      ? { user: fields.user }
      : {
          guild_id: guildId,
          member: {
            user: fields.user,
            roles: fields.roles,
            permissions: "0",
            joined_at: new Date().toISOString(),
            deaf: false,
            mute: false,
            flags: 0,
          },
        }),
    data: fields.data,
    ...(fields.message ? { message: fields.message } : {}),
    app_permissions: "0",
    locale: "en-US",
    entitlements: [],
    authorizing_integration_owners: {},
    context: guildId === undefined ? 1 : 0,
  };
}
